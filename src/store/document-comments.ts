import { sql, type Kysely } from "kysely";
import { commentView, newCommentId, type CommentRecord, type CommentState, type CommentWithDocument } from "../domain/comments.ts";
import { commentDeliveryBody } from "../domain/webhooks.ts";
import { fromRow } from "./document-rows.ts";
import type { Database } from "./schema.ts";
import { recordCommentEvent } from "./webhook-deliveries.ts";

/** What posting a comment came to. */
export type CommentOutcome = { ok: true; comment: CommentRecord } | { ok: false; reason: "not-found" | "comments-off" };

/** Ids are taken in chunks well under either dialect's bound on parameters per statement. */
const ID_CHUNK = 500;

const COLUMNS = [
  "c.commentId", "c.documentId", "c.accountId", "c.author", "c.body", "c.state", "c.createdAt", "c.updatedAt",
  "d.name as documentName", "d.title as documentTitle",
] as const;

type Row = Omit<CommentWithDocument, "createdAt" | "updatedAt"> & { createdAt: number | string; updatedAt: number | string };
const toComment = (r: Row): CommentWithDocument => ({ ...r, createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt) });

/**
 * Comments (decisions §16): a reader's post is stored with its `comment.created` delivery in one
 * transaction, held for approval unless the account publishes comments at once. Whenever the
 * approved comments of a document change, its `comments_version` moves in the same transaction,
 * so the reader page (cached by the record) is built again.
 */
export function documentCommentsRepo(db: Kysely<Database>) {
  const bumpVersions = async (trx: Kysely<Database>, documentIds: readonly string[]) => {
    if (documentIds.length === 0) return;
    await trx
      .updateTable("documents")
      .set((eb) => ({ commentsVersion: eb("commentsVersion", "+", 1) }))
      .where("documentId", "in", [...new Set(documentIds)])
      .execute();
  };

  const base = (q: Kysely<Database>) => q.selectFrom("documentComments as c").innerJoin("documents as d", "d.documentId", "c.documentId");

  /** The account's comments of these ids as they are now in `trx`. */
  const owned = async (trx: Kysely<Database>, accountId: number, ids: readonly string[]) =>
    ids.length === 0
      ? []
      : (await base(trx).select(COLUMNS).where("c.accountId", "=", accountId).where("c.commentId", "in", [...ids]).execute()).map(toComment);

  return {
    /** A reader's comment on an active document whose comments are on; checked in the same transaction. */
    async add(c: { documentId: string; author: string; body: string; now: number }): Promise<CommentOutcome> {
      return db.transaction().execute(async (trx): Promise<CommentOutcome> => {
        const doc = await trx
          .selectFrom("documents")
          .innerJoin("accounts", "accounts.id", "documents.accountId")
          .selectAll("documents")
          .select(["accounts.username", "accounts.publishComments"])
          .where("documents.documentId", "=", c.documentId)
          .executeTakeFirst();
        if (!doc || doc.state !== "A") return { ok: false, reason: "not-found" };
        if (doc.commentsAllowed !== 1) return { ok: false, reason: "comments-off" };
        const state: CommentState = doc.publishComments === 1 ? "approved" : "pending";
        const comment: CommentRecord = {
          commentId: newCommentId(), documentId: c.documentId, accountId: doc.accountId, author: c.author, body: c.body,
          state, createdAt: c.now, updatedAt: c.now,
        };
        await trx.insertInto("documentComments").values(comment).execute();
        if (state === "approved") await bumpVersions(trx, [c.documentId]);
        const { publishComments: _, ...record } = doc;
        await recordCommentEvent(trx, { accountId: doc.accountId, documentId: c.documentId, now: c.now }, async () =>
          commentDeliveryBody(fromRow(record), commentView({ ...comment, documentName: doc.name, documentTitle: doc.title }), c.now),
        );
        return { ok: true, comment };
      });
    },

    /** One page of a document's approved comments, newest first, and how many there are. */
    async approvedPage(documentId: string, startIndex: number, pageSize: number): Promise<{ totalCount: number; items: CommentRecord[] }> {
      const where = db.selectFrom("documentComments").where("documentId", "=", documentId).where("state", "=", "approved");
      const counted = await where.select((eb) => eb.fn.countAll<number | string | bigint>().as("n")).executeTakeFirstOrThrow();
      const totalCount = Number(counted.n);
      if (pageSize === 0 || startIndex >= totalCount) return { totalCount, items: [] };
      const rows = await where
        .select(["commentId", "documentId", "accountId", "author", "body", "state", "createdAt", "updatedAt"])
        .orderBy("createdAt", "desc")
        .orderBy("commentId", "desc")
        .limit(pageSize)
        .offset(startIndex)
        .execute();
      return { totalCount, items: rows.map((r) => ({ ...r, createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt) })) };
    },

    /** An account's comments (of one document, of some states), by time, paged (the app's queue, svc.document_comments.list). */
    async list(q: {
      accountId: number;
      documentId?: string;
      states?: readonly CommentState[];
      order: "asc" | "desc";
      startIndex: number;
      pageSize: number;
    }): Promise<{ totalCount: number; items: CommentWithDocument[] }> {
      let where = base(db).where("c.accountId", "=", q.accountId);
      if (q.documentId !== undefined) where = where.where("c.documentId", "=", q.documentId);
      if (q.states?.length) where = where.where("c.state", "in", [...q.states]);
      const counted = await where.select((eb) => eb.fn.countAll<number | string | bigint>().as("n")).executeTakeFirstOrThrow();
      const totalCount = Number(counted.n);
      if (q.pageSize === 0 || q.startIndex >= totalCount) return { totalCount, items: [] };
      const rows = await where
        .select(COLUMNS)
        .orderBy("c.createdAt", q.order)
        .orderBy(sql.ref("c.comment_id"), q.order)
        .limit(q.pageSize)
        .offset(q.startIndex)
        .execute();
      return { totalCount, items: rows.map(toComment) };
    },

    /** The account's comment of this id, with its document's name. */
    async get(accountId: number, commentId: string): Promise<CommentWithDocument | undefined> {
      return (await owned(db, accountId, [commentId]))[0];
    },

    /** Puts the account's comments of these ids in `state`; answers those changed (unknown ids are passed over). */
    async setState(accountId: number, commentIds: readonly string[], state: CommentState, now: number): Promise<CommentWithDocument[]> {
      const changed: CommentWithDocument[] = [];
      for (let i = 0; i < commentIds.length; i += ID_CHUNK) {
        const chunk = commentIds.slice(i, i + ID_CHUNK);
        await db.transaction().execute(async (trx) => {
          const before = await owned(trx, accountId, chunk);
          const moving = before.filter((c) => c.state !== state);
          if (moving.length === 0) return;
          await trx
            .updateTable("documentComments")
            .set({ state, updatedAt: now })
            .where("accountId", "=", accountId)
            .where("commentId", "in", moving.map((c) => c.commentId))
            .execute();
          // Approving shows a comment under the reader, hiding or holding an approved one takes it away.
          await bumpVersions(trx, moving.filter((c) => c.state === "approved" || state === "approved").map((c) => c.documentId));
          changed.push(...moving.map((c) => ({ ...c, state, updatedAt: now })));
        });
      }
      return changed;
    },

    /** Deletes the account's comments of these ids; answers how many went. */
    async delete(accountId: number, commentIds: readonly string[]): Promise<number> {
      let removed = 0;
      for (let i = 0; i < commentIds.length; i += ID_CHUNK) {
        const chunk = commentIds.slice(i, i + ID_CHUNK);
        await db.transaction().execute(async (trx) => {
          const before = await owned(trx, accountId, chunk);
          if (before.length === 0) return;
          await trx.deleteFrom("documentComments").where("accountId", "=", accountId).where("commentId", "in", before.map((c) => c.commentId)).execute();
          await bumpVersions(trx, before.filter((c) => c.state === "approved").map((c) => c.documentId));
          removed += before.length;
        });
      }
      return removed;
    },

    /** How many of the account's comments wait for approval (the app's navigation shows it). */
    async pendingCount(accountId: number): Promise<number> {
      const row = await db
        .selectFrom("documentComments")
        .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
        .where("accountId", "=", accountId)
        .where("state", "=", "pending")
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export type DocumentCommentsRepo = ReturnType<typeof documentCommentsRepo>;
