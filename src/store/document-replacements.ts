import { sql, type Kysely, type Selectable } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import type { Replacement } from "../domain/document-replacement.ts";
import { REPLACE_FILE } from "../domain/job-kinds.ts";
import type { StoreDialect } from "./dialects/dialect.ts";
import { recordsIn } from "./documents.ts";
import type { Database, DocumentReplacementsTable } from "./schema.ts";
import { searchIndex } from "./search-index.ts";
import { recordDocumentEvent } from "./webhook-deliveries.ts";

/** The file a replacement brings: where it lies and what it is. */
export type ReplacementSource = Pick<DocumentRecord, "origin" | "orgDocType" | "orgDocName" | "slurpUrl" | "originalSize" | "blobId">;

/** What a finished replacement's conversion made: the document's new pages, covers, text. */
export interface ReplacementResult {
  orgDocType: DocumentRecord["orgDocType"];
  originalSize: number;
  pageCount: number;
  coverWidth: number;
  coverHeight: number;
  /** Undefined: the description is kept (the publisher gave it). */
  description: string | undefined;
  /** Page n's text at index n - 1. */
  pageTexts: readonly string[];
}

export type StartOutcome =
  | { ok: true; replacement: Replacement; supersededBlobId: string | undefined }
  | { ok: false; reason: "not-found" | "not-published" };

export type SwitchOutcome = { ok: true; previousBlobId: string } | { ok: false; reason: "superseded" | "gone" };

/** Moves the record's `ep` forward (never back: an update in the same request may have moved it further). */
async function touch(q: Kysely<Database>, documentId: string, now: number): Promise<void> {
  await q
    .updateTable("documents")
    .set({ updatedAt: sql<number>`case when updated_at < ${now} then ${now} else updated_at + 1000 end` })
    .where("documentId", "=", documentId)
    .execute();
}

const toReplacement = (r: Selectable<DocumentReplacementsTable>): Replacement => ({ ...r });

/**
 * A published document's new file (issue 26 item 5, decisions §14): the row of the file converting
 * beside the pages readers see, its job, and the one guarded switch. Statistics, comments, ratings,
 * bookmarks (folders) and embeds are keyed by the documentId, which never changes: they stay.
 */
export function documentReplacementsRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, "search">) {
  const index = searchIndex(db, dialect.search);
  return {
    /**
     * The replacement's row and its conversion job in one transaction, for a document of the
     * account that is published (A). A replacement already there gives way (the newest wins): its
     * queued job goes, a running one finds its row gone and discards what it made.
     */
    async start(accountId: number, documentId: string, source: ReplacementSource, now: number, requestId?: string): Promise<StartOutcome> {
      return db.transaction().execute(async (trx): Promise<StartOutcome> => {
        const doc = await trx
          .selectFrom("documents").select(["state"])
          .where("accountId", "=", accountId).where("documentId", "=", documentId)
          .executeTakeFirst();
        if (!doc) return { ok: false, reason: "not-found" };
        if (doc.state !== "A") return { ok: false, reason: "not-published" };
        const before = await trx.selectFrom("documentReplacements").select(["blobId"]).where("documentId", "=", documentId).executeTakeFirst();
        await trx.deleteFrom("jobs").where("documentId", "=", documentId).where("kind", "=", REPLACE_FILE).where("state", "=", "queued").execute();
        await trx.deleteFrom("documentReplacements").where("documentId", "=", documentId).execute();
        const job = await trx
          .insertInto("jobs")
          .values({
            kind: REPLACE_FILE, documentId, accountId, state: "queued", attempts: 0, runAt: now,
            leaseUntil: null, leaseOwner: null, lastError: "", createdAt: now, updatedAt: now, requestId: requestId ?? null,
          })
          .returning("id")
          .executeTakeFirstOrThrow();
        const row: Selectable<DocumentReplacementsTable> = {
          documentId, accountId, blobId: source.blobId, jobId: Number(job.id), origin: source.origin, orgDocType: source.orgDocType,
          orgDocName: source.orgDocName, slurpUrl: source.slurpUrl, originalSize: source.originalSize, state: "P",
          errorCode: 0, errorMessage: "", createdAt: now, updatedAt: now,
        };
        await trx.insertInto("documentReplacements").values(row).execute();
        // Bumps the record's `ep`: v1 lists and the app's pages see that something changed.
        await touch(trx, documentId, now);
        return { ok: true, replacement: toReplacement(row), supersededBlobId: before?.blobId };
      });
    },

    /** The document's replacement (converting or failed), if any. */
    async get(documentId: string): Promise<Replacement | undefined> {
      const row = await db.selectFrom("documentReplacements").selectAll().where("documentId", "=", documentId).executeTakeFirst();
      return row ? toReplacement(row) : undefined;
    },

    /** The replacements of these documents, by documentId (lists show each row's). */
    async getMany(documentIds: readonly string[]): Promise<Map<string, Replacement>> {
      const out = new Map<string, Replacement>();
      for (let i = 0; i < documentIds.length; i += 500) {
        const rows = await db.selectFrom("documentReplacements").selectAll().where("documentId", "in", documentIds.slice(i, i + 500)).execute();
        for (const r of rows) out.set(r.documentId, toReplacement(r));
      }
      return out;
    },

    /** The URL replacement's fetched file: its real type and size, while its job still owns the row. */
    async recordFetched(documentId: string, jobId: number, orgDocType: DocumentRecord["orgDocType"], originalSize: number, now: number): Promise<boolean> {
      const r = await db
        .updateTable("documentReplacements").set({ orgDocType, originalSize, updatedAt: now })
        .where("documentId", "=", documentId).where("jobId", "=", jobId).where("state", "=", "P")
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    /**
     * The switch, in one transaction guarded by the job and the document's state: the record takes
     * the new file's blobs, page count, covers and (unless the publisher gave one) description; the
     * search index takes its text; the row goes; `document.active` is written for the webhook. The
     * name, and everything keyed by the documentId, stay. Superseded when a newer replacement took
     * the row, gone when the document was deleted or is no longer published.
     */
    async switchTo(documentId: string, jobId: number, result: ReplacementResult, now: number): Promise<SwitchOutcome> {
      return db.transaction().execute(async (trx): Promise<SwitchOutcome> => {
        const row = await trx
          .selectFrom("documentReplacements").selectAll()
          .where("documentId", "=", documentId).where("jobId", "=", jobId).where("state", "=", "P")
          .executeTakeFirst();
        if (!row) return { ok: false, reason: "superseded" };
        const doc = await trx.selectFrom("documents").select(["blobId", "accountId"]).where("documentId", "=", documentId).where("state", "=", "A").executeTakeFirst();
        if (!doc) return { ok: false, reason: "gone" };
        await trx
          .updateTable("documents")
          .set({
            blobId: row.blobId, origin: row.origin, orgDocType: result.orgDocType, orgDocName: row.orgDocName, slurpUrl: row.slurpUrl,
            originalSize: result.originalSize, pageCount: result.pageCount, coverWidth: result.coverWidth, coverHeight: result.coverHeight,
            ...(result.description !== undefined
              ? { description: sql<string>`case when description_given = 1 then description else ${result.description} end` }
              : {}),
            updatedAt: sql<number>`case when updated_at < ${now} then ${now} else updated_at + 1000 end`,
          })
          .where("documentId", "=", documentId).where("state", "=", "A")
          .execute();
        await trx.deleteFrom("documentReplacements").where("documentId", "=", documentId).execute();
        await index.indexPublished(trx, documentId, result.pageTexts);
        // Subscribers learn of the new pages the way they learnt of the first ones.
        await recordDocumentEvent(trx, { event: "document.active", accountId: doc.accountId, now }, () => recordsIn(trx, [documentId]));
        return { ok: true, previousBlobId: doc.blobId };
      });
    },

    /**
     * Replacements still converting whose job is gone or ended without them (a job of a kind an
     * older worker failed unclaimed, a lost row): failed with code 9, so none stays converting for
     * good. Answers their blobIds, whose files serve nobody now.
     */
    async failStranded(now: number, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom("documentReplacements as r")
        .select(["r.documentId", "r.jobId", "r.blobId"])
        .where("r.state", "=", "P")
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("jobs as j").select("j.id").whereRef("j.id", "=", "r.jobId").where("j.state", "in", ["queued", "running"]))),
        )
        .limit(limit)
        .execute();
      const failed: string[] = [];
      for (const r of rows) {
        const done = await db
          .updateTable("documentReplacements").set({ state: "F", errorCode: 9, errorMessage: "The conversion stopped unexpectedly.", updatedAt: now })
          .where("documentId", "=", r.documentId).where("jobId", "=", r.jobId).where("state", "=", "P")
          .executeTakeFirst();
        if (Number(done.numUpdatedRows) === 1) failed.push(r.blobId);
      }
      return failed;
    },

    /** The replacement failed for good: recorded on its row (the document keeps its pages); false when superseded or gone. */
    async markFailed(documentId: string, jobId: number, errorCode: number, errorMessage: string, now: number): Promise<Replacement | undefined> {
      const r = await db
        .updateTable("documentReplacements").set({ state: "F", errorCode, errorMessage, updatedAt: now })
        .where("documentId", "=", documentId).where("jobId", "=", jobId).where("state", "=", "P")
        .returningAll()
        .executeTakeFirst();
      if (!r) return undefined;
      await touch(db, documentId, now);
      return toReplacement(r);
    },
  };
}
