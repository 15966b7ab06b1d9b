import { sql, type Kysely } from "kysely";
import { commentView, newCommentId, type CommentRecord, type CommentState, type CommentWithDocument } from "../domain/comments.ts";
import { commentDeliveryBody } from "../domain/webhooks.ts";
import { fromRow } from "./document-rows.ts";
import type { Database } from "./schema.ts";
import { recordCommentEvents } from "./webhook-deliveries.ts";

/** What posting a comment came to. */
export type CommentOutcome = { ok: true; comment: CommentRecord } | { ok: false; reason: "not-found" | "comments-off" };

/** Ids are taken in chunks well under either dialect's bound on parameters per statement. */
const ID_CHUNK = 500;
/** Comments written in one transaction at most. */
const MAX_BATCH = 200;
/** Rows of one insert: 8 values each, well under either dialect's bound on parameters. */
const INSERT_CHUNK = 100;

export interface NewComment {
  documentId: string;
  author: string;
  body: string;
  now: number;
}

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
  /**
   * The documents whose approved comments changed: their version moves (the reader page is built
   * again) and their count by how many came or went.
   */
  const changeShown = async (trx: Kysely<Database>, changes: ReadonlyArray<{ documentId: string; delta: number }>) => {
    const byDocument = new Map<string, number>();
    for (const c of changes) byDocument.set(c.documentId, (byDocument.get(c.documentId) ?? 0) + c.delta);
    for (const [documentId, delta] of byDocument) {
      await trx
        .updateTable("documents")
        .set((eb) => ({ commentsVersion: eb("commentsVersion", "+", 1), commentsShown: eb("commentsShown", "+", delta) }))
        .where("documentId", "=", documentId)
        .execute();
    }
  };

  const base = (q: Kysely<Database>) => q.selectFrom("documentComments as c").innerJoin("documents as d", "d.documentId", "c.documentId");

  /** The account's comments of these ids as they are now in `trx`. */
  const owned = async (trx: Kysely<Database>, accountId: number, ids: readonly string[]) =>
    ids.length === 0
      ? []
      : (await base(trx).select(COLUMNS).where("c.accountId", "=", accountId).where("c.commentId", "in", [...ids]).execute()).map(toComment);

  /**
   * The checks and writes of comments posted together, in `trx`: each document read once, the
   * comments inserted together, the counts and the deliveries written with them.
   */
  const writeAll = async (trx: Kysely<Database>, items: readonly NewComment[]): Promise<CommentOutcome[]> => {
    const docs = await trx
      .selectFrom("documents")
      .innerJoin("accounts", "accounts.id", "documents.accountId")
      .selectAll("documents")
      .select(["accounts.username", "accounts.publishComments"])
      .where("documents.documentId", "in", [...new Set(items.map((i) => i.documentId))])
      .execute();
    const byId = new Map(docs.map((d) => [d.documentId, d]));
    const outcomes = items.map((c): CommentOutcome => {
      const doc = byId.get(c.documentId);
      if (!doc || doc.state !== "A") return { ok: false, reason: "not-found" };
      if (doc.commentsAllowed !== 1) return { ok: false, reason: "comments-off" };
      return {
        ok: true,
        comment: {
          commentId: newCommentId(), documentId: c.documentId, accountId: doc.accountId, author: c.author, body: c.body,
          state: doc.publishComments === 1 ? "approved" : "pending", createdAt: c.now, updatedAt: c.now,
        },
      };
    });
    const stored = outcomes.flatMap((o) => (o.ok ? [o.comment] : []));
    for (let i = 0; i < stored.length; i += INSERT_CHUNK) await trx.insertInto("documentComments").values(stored.slice(i, i + INSERT_CHUNK)).execute();
    await changeShown(trx, stored.filter((c) => c.state === "approved").map((c) => ({ documentId: c.documentId, delta: 1 })));
    await recordCommentEvents(trx, stored.map((comment) => ({
      accountId: comment.accountId, documentId: comment.documentId, now: comment.createdAt,
      body: () => {
        const { publishComments: _, ...record } = byId.get(comment.documentId)!;
        return commentDeliveryBody(fromRow(record), commentView({ ...comment, documentName: record.name, documentTitle: record.title }), comment.createdAt);
      },
    })));
    return outcomes;
  };

  const waiting: Array<{ comment: NewComment; resolve(o: CommentOutcome): void; reject(err: unknown): void }> = [];
  const flush = async () => {
    const batch = waiting.splice(0, MAX_BATCH);
    if (waiting.length > 0) setImmediate(() => void flush());
    try {
      const outcomes = await db.transaction().execute((trx) => writeAll(trx, batch.map((b) => b.comment)));
      batch.forEach((item, i) => item.resolve(outcomes[i]!));
    } catch {
      // Alone, each succeeds or fails on its own account.
      for (const item of batch) {
        await db.transaction().execute((trx) => writeAll(trx, [item.comment])).then(([o]) => item.resolve(o!), item.reject);
      }
    }
  };

  return {
    /**
     * A reader's comment on an active document whose comments are on, checked in the transaction
     * that stores it. Comments arriving together are written in one transaction (one commit for
     * all, a burst of posts does not queue behind as many commits); should it fail, each is tried
     * again alone, so one bad comment never takes another with it.
     */
    add(c: NewComment): Promise<CommentOutcome> {
      return new Promise((resolve, reject) => {
        waiting.push({ comment: c, resolve, reject });
        if (waiting.length === 1) setImmediate(() => void flush());
      });
    },

    /** One page of a document's approved comments, newest first, and how many there are. */
    async approvedPage(documentId: string, startIndex: number, pageSize: number): Promise<{ totalCount: number; items: CommentRecord[] }> {
      const where = db.selectFrom("documentComments").where("documentId", "=", documentId).where("state", "=", "approved");
      const counted = await db.selectFrom("documents").select("commentsShown").where("documentId", "=", documentId).executeTakeFirst();
      const totalCount = counted?.commentsShown ?? 0;
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
          await changeShown(trx, moving.filter((c) => c.state === "approved" || state === "approved").map((c) => ({ documentId: c.documentId, delta: state === "approved" ? 1 : -1 })));
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
          await changeShown(trx, before.filter((c) => c.state === "approved").map((c) => ({ documentId: c.documentId, delta: -1 })));
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
