import type { Kysely } from "kysely";
import type { V2Row } from "../domain/v2-documents.ts";
import type { Database } from "./schema.ts";

/** What only v2 knows of a document (decisions §14); a document without a row has the defaults. */
export type DocumentV2State = V2Row;

export interface StackItemsPage {
  totalCount: number;
  documentIds: string[];
}

const parseObject = (text: string | null): Record<string, unknown> | null => {
  if (text === null) return null;
  const v = JSON.parse(text) as unknown;
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
};

/**
 * The `document_v2` table (migration 0015), the scheduled publish's job beside it, and the v2 view
 * of folders (stacks: their access type, and their items, which are the account's own bookmarks
 * placed in them).
 */
export function documentV2Repo(db: Kysely<Database>) {
  /**
   * Writes the row, and moves the account's `documentsVersion` as a change of the document itself
   * would (a no-op update of its row fires migration 0003's triggers): v2 answers cached under that
   * version hold these fields too.
   */
  const upsert = async (trx: Kysely<Database>, documentId: string, set: { info?: string; changes?: string | null; scheduledAt?: number | null }) => {
    await trx
      .insertInto("documentV2")
      .values({ documentId, info: set.info ?? "{}", changes: set.changes ?? null, scheduledAt: set.scheduledAt ?? null })
      .onConflict((oc) => oc.column("documentId").doUpdateSet(set))
      .execute();
    await trx.updateTable("documents").set((eb) => ({ draft: eb.ref("draft") })).where("documentId", "=", documentId).execute();
  };

  return {
    async get(documentIds: readonly string[]): Promise<Map<string, DocumentV2State>> {
      const out = new Map<string, DocumentV2State>();
      if (documentIds.length === 0) return out;
      const rows = await db.selectFrom("documentV2").selectAll().where("documentId", "in", [...documentIds]).execute();
      for (const r of rows) {
        out.set(r.documentId, { info: parseObject(r.info) ?? {}, changes: parseObject(r.changes), scheduledAt: r.scheduledAt === null ? null : Number(r.scheduledAt) });
      }
      return out;
    },

    async setInfo(documentId: string, info: Record<string, unknown>): Promise<void> {
      await db.transaction().execute((trx) => upsert(trx, documentId, { info: JSON.stringify(info) }));
    },

    async setChanges(documentId: string, changes: Record<string, unknown> | null): Promise<void> {
      await db.transaction().execute((trx) => upsert(trx, documentId, { changes: changes === null ? null : JSON.stringify(changes) }));
    },

    /** The publish at `at`, and its durable job, in one transaction (decisions §14). */
    async schedule(documentId: string, accountId: number, at: number, now: number): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await upsert(trx, documentId, { scheduledAt: at });
        await trx.deleteFrom("jobs").where("documentId", "=", documentId).where("kind", "=", "publish-scheduled").where("state", "=", "queued").execute();
        await trx
          .insertInto("jobs")
          .values({
            kind: "publish-scheduled", documentId, accountId, state: "queued", attempts: 0, runAt: at,
            leaseUntil: null, leaseOwner: null, lastError: "", createdAt: now, updatedAt: now, requestId: null,
          })
          .execute();
      });
    },

    async clearSchedule(documentId: string): Promise<void> {
      await db.transaction().execute((trx) => upsert(trx, documentId, { scheduledAt: null }));
    },

    /**
     * A stack's accessType is its folder's place on the profile (issue 26 item 9, docs/api-v2.md):
     * PUBLIC when shown there, UNLISTED when not. One column holds it, so the app, v1 and v2 agree.
     */
    async stackAccessTypes(accountId: number): Promise<Map<string, string>> {
      const rows = await db.selectFrom("folders").select(["folderId", "onProfile"]).where("accountId", "=", accountId).execute();
      return new Map(rows.map((r) => [r.folderId, Number(r.onProfile) === 1 ? "PUBLIC" : "UNLISTED"]));
    },

    async setStackAccessType(accountId: number, folderId: string, accessType: string): Promise<void> {
      await db.updateTable("folders").set({ onProfile: accessType === "PUBLIC" ? 1 : 0 }).where("accountId", "=", accountId).where("folderId", "=", folderId).execute();
    },

    /** The account's published documents bookmarked in the folder, oldest placement first; `includeUnlisted` false keeps public ones only. */
    async stackItems(accountId: number, folderId: string, includeUnlisted: boolean, offset: number, limit: number): Promise<StackItemsPage> {
      let q = db
        .selectFrom("bookmarkFolders as bf")
        .innerJoin("bookmarks as b", "b.bookmarkId", "bf.bookmarkId")
        .innerJoin("documents as d", "d.documentId", "b.documentId")
        .where("bf.folderId", "=", folderId)
        .where("b.accountId", "=", accountId)
        .where("d.accountId", "=", accountId)
        .where("d.state", "=", "A");
      if (!includeUnlisted) q = q.where("d.access", "=", "public");
      const all = await q.select(["d.documentId"]).select((eb) => eb.fn.min("bf.addedAt").as("addedAt")).groupBy("d.documentId").execute();
      all.sort((a, b) => Number(a.addedAt) - Number(b.addedAt) || (a.documentId < b.documentId ? -1 : 1));
      return { totalCount: all.length, documentIds: all.slice(offset, offset + limit).map((r) => r.documentId) };
    },

    /** Bookmarks of the account that place this document in the folder. */
    async stackItemBookmarks(accountId: number, folderId: string, documentId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("bookmarkFolders as bf")
        .innerJoin("bookmarks as b", "b.bookmarkId", "bf.bookmarkId")
        .select("b.bookmarkId")
        .where("bf.folderId", "=", folderId)
        .where("b.accountId", "=", accountId)
        .where("b.documentId", "=", documentId)
        .execute();
      return rows.map((r) => r.bookmarkId);
    },

  };
}
