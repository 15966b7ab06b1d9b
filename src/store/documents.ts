import { sql, type Kysely, type Updateable } from "kysely";
import { recordRename, releaseName } from "./document-old-names.ts";
import type { Access, DocumentOrigin, DocumentRecord, DocumentState } from "../domain/document.ts";
import type { OrgDocType, RecordedDocType } from "../domain/formats.ts";
import type { JobKind } from "../domain/job-kinds.ts";
import type { StoreDialect } from "./dialects/dialect.ts";
import { bookmarksRepo } from "./bookmarks.ts";
import { fromRow, toRow } from "./document-rows.ts";
import type { Database, DocumentsTable } from "./schema.ts";
import { recordDocumentEvent } from "./webhook-deliveries.ts";
import { searchIndex } from "./search-index.ts";

/** A queued job for a document, written in the caller's transaction (record and job together). */
function queueJob(trx: Kysely<Database>, kind: JobKind, documentId: string, accountId: number, now: number, requestId: string | undefined) {
  return trx
    .insertInto("jobs")
    .values({
      kind, documentId, accountId, state: "queued", attempts: 0, runAt: now,
      leaseUntil: null, leaseOwner: null, lastError: "", createdAt: now, updatedAt: now, requestId: requestId ?? null,
    })
    .execute();
}

// Where they were first written; other modules of the store read rows with them.
export { fromRow, toRow } from "./document-rows.ts";

/** The document fields `svc.documents.list` sorts by (decisions §8), each a column of its own. */
export const DOCUMENT_SORT_FIELDS = ["publishDate", "title", "name", "documentId", "description", "pageCount", "ep"] as const;
export type DocumentSortField = (typeof DOCUMENT_SORT_FIELDS)[number];

const SORT_COLUMNS = {
  publishDate: "publishDate", title: "title", name: "name", documentId: "documentId",
  description: "description", pageCount: "pageCount", ep: "updatedAt",
} as const satisfies Record<DocumentSortField, keyof DocumentsTable>;
const TEXT_SORTS: ReadonlySet<DocumentSortField> = new Set(["title", "name", "documentId", "description"]);

/** One account's documents, filtered, sorted and paged in SQL. An absent or empty filter matches all. */
export interface DocumentListQuery {
  accountId: number;
  access?: Access;
  states?: readonly DocumentState[];
  orgDocTypes?: readonly RecordedDocType[];
  origins?: readonly DocumentOrigin[];
  orgDocName?: string;
  /** v2 (decisions §14): true lists only unpublished drafts; absent or false, only documents that are not (v1 and the app). */
  drafts?: boolean;
  /** v2's `q`: a case-insensitive substring of the title or the description. */
  text?: string;
  /** Only documents in this folder of the account (the app's list). */
  folderId?: string;
  sortBy: DocumentSortField;
  order: "asc" | "desc";
  startIndex: number;
  /** 0 counts only. */
  pageSize: number;
}

/** What `svc.document.update` writes; `updatedAt` always. */
export type DocumentPatch = Omit<Updateable<DocumentsTable>, "documentId" | "accountId" | "blobId"> & { updatedAt: number };

/** Lookups by name go in chunks well under either dialect's bound on parameters per statement. */
const NAME_CHUNK = 500;

/** What a finished conversion publishes; `name` is made from the title, for a document the caller did not name. */
export interface ActivationResult {
  pageCount: number;
  coverWidth: number;
  coverHeight: number;
  description: string | undefined;
  name: string | undefined;
  /** Page n's text at index n - 1, for the search index; absent: the fields alone are indexed again. */
  pageTexts?: readonly string[];
}

/**
 * What a write that may collide on the account's document names reports: a race between two
 * requests for one name is answered as taken, as the check before it would have said.
 */
export type DocumentWrite = { ok: true } | { ok: false; reason: "name-taken" | "not-found" };

/** Whole records as they are now in `q` (a transaction): what a change's webhook deliveries carry. */
export async function recordsIn(q: Kysely<Database>, documentIds: string[]): Promise<DocumentRecord[]> {
  const rows = await q
    .selectFrom("documents")
    .innerJoin("accounts", "accounts.id", "documents.accountId")
    .selectAll("documents")
    .select("accounts.username")
    .where("documents.documentId", "in", documentIds)
    .orderBy("documents.documentId")
    .execute();
  return rows.map(fromRow);
}

/** Changes of these fields are written to the search index too. */
const INDEXED_FIELDS: ReadonlyArray<keyof DocumentPatch> = ["title", "description", "tags", "language"];

export function documentsRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, "orderableText" | "search" | "isUniqueViolation">) {
  const index = searchIndex(db, dialect.search);
  /** A whole record with its owner's username, as every read of a document needs it. */
  const selectRecords = () =>
    db.selectFrom("documents").innerJoin("accounts", "accounts.id", "documents.accountId").selectAll("documents").select("accounts.username");

  const filtered = (q: DocumentListQuery) => {
    let query = db.selectFrom("documents").where("documents.accountId", "=", q.accountId);
    if (q.access !== undefined) query = query.where("documents.access", "=", q.access);
    if (q.states?.length) query = query.where("documents.state", "in", [...q.states]);
    if (q.orgDocTypes?.length) query = query.where("documents.orgDocType", "in", [...q.orgDocTypes]);
    if (q.origins?.length) query = query.where("documents.origin", "in", [...q.origins]);
    if (q.orgDocName !== undefined) query = query.where("documents.orgDocName", "=", q.orgDocName);
    if (q.folderId !== undefined) {
      // The app's folder filter: documents the account has a bookmark of in this folder (decisions §7).
      const folderId = q.folderId;
      query = query.where((w) =>
        w.exists(
          w.selectFrom("bookmarks")
            .innerJoin("bookmarkFolders", "bookmarkFolders.bookmarkId", "bookmarks.bookmarkId")
            .select("bookmarks.bookmarkId")
            .whereRef("bookmarks.documentId", "=", "documents.documentId")
            .where("bookmarks.accountId", "=", q.accountId)
            .where("bookmarkFolders.folderId", "=", folderId),
        ),
      );
    }
    query = query.where("documents.draft", "=", q.drafts === true ? 1 : 0);
    if (q.text !== undefined && q.text !== "") {
      const pattern = `%${q.text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query = query.where((w) =>
        w.or([
          sql<boolean>`lower(documents.title) like ${pattern} escape '\\'`,
          sql<boolean>`lower(documents.description) like ${pattern} escape '\\'`,
        ]),
      );
    }
    return query;
  };

  const getByName = async (accountId: number, name: string): Promise<DocumentRecord | undefined> => {
    const row = await selectRecords().where("documents.accountId", "=", accountId).where("documents.name", "=", name).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  };

  const getById = async (accountId: number, documentId: string): Promise<DocumentRecord | undefined> => {
    const row = await selectRecords()
      .where("documents.accountId", "=", accountId)
      .where("documents.documentId", "=", documentId)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  };

  /** The record and its conversion job in one transaction: a crash can never leave one without the other. */
  const insertRecordAndJob = (doc: DocumentRecord, jobKind: JobKind, requestId: string | undefined) =>
    db.transaction().execute(async (trx) => {
      await trx.insertInto("documents").values(toRow(doc)).execute();
      await releaseName(trx, doc.accountId, doc.name);
      await index.indexFields(trx, doc.documentId);
      await queueJob(trx, jobKind, doc.documentId, doc.accountId, doc.createdAt, requestId);
    });

  /** P -> A and the bookmarks in the folders the upload named, together (decisions §7). */
  const activate = (documentId: string, result: ActivationResult, now: number): Promise<boolean> =>
    db.transaction().execute(async (trx) => {
      // A name made from the title may replace the one it had: the old one keeps leading here.
      const before = result.name === undefined ? undefined : await trx.selectFrom("documents").select("name").where("documentId", "=", documentId).executeTakeFirst();
      const activated = await trx
        .updateTable("documents")
        .set({
          // A v2 draft is converted but not published (decisions §14): D until its publish.
          state: sql<"A" | "D">`case when draft = 1 then 'D' else 'A' end`,
          pageCount: result.pageCount,
          coverWidth: result.coverWidth,
          coverHeight: result.coverHeight,
          // An update during conversion may have set them since the worker read the record: the caller's wins.
          ...(result.description !== undefined
            ? { description: sql<string>`case when description_given = 1 then description else ${result.description} end` }
            : {}),
          ...(result.name !== undefined
            ? { name: sql<string>`case when name_given = 1 or access <> 'public' or draft = 1 then name else ${result.name} end` }
            : {}),
          updatedAt: now,
        })
        .where("documentId", "=", documentId)
        .where("state", "=", "P")
        .returning(["accountId", "title", "description", "folderIds", "draft", "name"])
        .executeTakeFirst();
      if (!activated) return false;
      if (before) await recordRename(trx, { accountId: activated.accountId, documentId, oldName: before.name, newName: activated.name, now });
      const folderIds = JSON.parse(activated.folderIds) as string[];
      await bookmarksRepo(trx).addForActivatedDocument(trx, { documentId, ...activated }, folderIds, now);
      // A draft's `document.active` is recorded when it is published (publishDraft).
      if (activated.draft !== 1) {
        await recordDocumentEvent(trx, { event: "document.active", accountId: activated.accountId, now }, () => recordsIn(trx, [documentId]));
      }
      // Findable the moment it is A: indexed in the transaction that publishes it.
      if (result.pageTexts) await index.indexPublished(trx, documentId, result.pageTexts);
      else await index.indexFields(trx, documentId);
      return true;
    });

  return {
    /** The record and its conversion job; a name another document has meanwhile taken is refused. */
    async insertWithJob(doc: DocumentRecord, jobKind: JobKind, requestId?: string): Promise<DocumentWrite> {
      try {
        await insertRecordAndJob(doc, jobKind, requestId);
      } catch (err) {
        if (dialect.isUniqueViolation(err)) return { ok: false, reason: "name-taken" };
        throw err;
      }
      return { ok: true };
    },

    /**
     * Whether a document of the account, other than `exceptDocumentId`, has this name or this
     * documentId: a documentId names its document too (decisions §5), so it is never given to
     * another one.
     */
    async isNameTaken(accountId: number, name: string, exceptDocumentId?: string): Promise<boolean> {
      let q = db
        .selectFrom("documents")
        .select("documentId")
        .where("accountId", "=", accountId)
        .where((w) => w.or([w("name", "=", name), w("documentId", "=", name)]));
      if (exceptDocumentId !== undefined) q = q.where("documentId", "<>", exceptDocumentId);
      return (await q.executeTakeFirst()) !== undefined;
    },

    /** For the worker, which serves every account. */
    async getForConversion(documentId: string): Promise<DocumentRecord | undefined> {
      const row = await selectRecords().where("documents.documentId", "=", documentId).executeTakeFirst();
      return row ? fromRow(row) : undefined;
    },

    /** The fetched original of a URL upload: its real type and size. Only while processing. */
    async recordFetchedOriginal(documentId: string, orgDocType: OrgDocType, originalSize: number, now: number): Promise<boolean> {
      const r = await db
        .updateTable("documents")
        .set({ orgDocType, originalSize, updatedAt: now })
        .where("documentId", "=", documentId)
        .where("state", "=", "P")
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    /**
     * P -> A in one statement guarded by the state, so a second run or a deleted document changes
     * nothing. A name the caller did not give becomes one made from the title, if still free, and
     * only for a public document: a private one keeps its documentId, which no one can guess
     * (decisions §5). Both are judged here, on the row, so an update during conversion counts.
     * When another document took the name meanwhile, it is published under its documentId, which
     * is always free. False when the document is no longer processing (deleted, or done).
     */
    async markActive(documentId: string, result: ActivationResult, now: number): Promise<boolean> {
      try {
        return await activate(documentId, result, now);
      } catch (err) {
        if (result.name === undefined || !dialect.isUniqueViolation(err)) throw err;
        return activate(documentId, { ...result, name: undefined }, now);
      }
    },

    /** Whether any of the document's page texts is in the search index (migration 0011's job asks before it reads them). */
    async hasIndexedText(documentId: string): Promise<boolean> {
      return index.hasPageText(db, documentId);
    },

    /**
     * A published document's page texts (page n at index n - 1) into the search index, in one
     * transaction that finds it still `A`; false when it is not. A delete that commits meanwhile
     * makes the index's insert fail on its reference to the document, and the job's retry skips it.
     */
    async indexStoredText(documentId: string, pageTexts: readonly string[]): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom("documents").select("state").where("documentId", "=", documentId).executeTakeFirst();
        if (row?.state !== "A") return false;
        await index.indexPublished(trx, documentId, pageTexts);
        return true;
      });
    },

    async markFailed(documentId: string, errorCode: number, errorMessage: string, now: number): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const failed = await trx
          .updateTable("documents")
          .set({ state: "F", errorCode, errorMessage, updatedAt: now })
          .where("documentId", "=", documentId)
          .where("state", "=", "P")
          .returning("accountId")
          .executeTakeFirst();
        if (!failed) return false;
        await recordDocumentEvent(trx, { event: "document.failed", accountId: failed.accountId, now }, () => recordsIn(trx, [documentId]));
        return true;
      });
    },

    /** Which of these names the account already uses, as a name or a documentId (to make a title-derived name unique). */
    async takenNames(accountId: number, candidates: string[]): Promise<Set<string>> {
      if (candidates.length === 0) return new Set();
      const rows = await db
        .selectFrom("documents")
        .select(["name", "documentId"])
        .where("accountId", "=", accountId)
        .where((w) => w.or([w("name", "in", candidates), w("documentId", "in", candidates)]))
        .execute();
      const wanted = new Set(candidates);
      return new Set(rows.flatMap((r) => [r.name, r.documentId]).filter((n) => wanted.has(n)));
    },

    /** One page of an account's documents and the count of all that match (decisions §8). */
    async list(q: DocumentListQuery): Promise<{ totalCount: number; records: DocumentRecord[] }> {
      const counted = await filtered(q).select((eb) => eb.fn.countAll<number | string | bigint>().as("n")).executeTakeFirstOrThrow();
      const totalCount = Number(counted.n);
      if (q.pageSize === 0 || q.startIndex >= totalCount) return { totalCount, records: [] };
      const column = SORT_COLUMNS[q.sortBy];
      const by = (name: string, text: boolean) =>
        text ? dialect.orderableText(`documents.${name}`) : sql.ref(`documents.${name}`);
      const rows = await filtered(q)
        .innerJoin("accounts", "accounts.id", "documents.accountId")
        .selectAll("documents")
        .select("accounts.username")
        .orderBy(by(column, TEXT_SORTS.has(q.sortBy)), q.order)
        .orderBy(by("documentId", true), q.order)
        .limit(q.pageSize)
        .offset(q.startIndex)
        .execute();
      return { totalCount, records: rows.map(fromRow) };
    },

    getByName,

    /**
     * The document an operation names (decisions §5): by its name, else by its documentId, so a
     * client that kept the name answered at upload finds it after a title-based name replaced it.
     */
    async getByNameOrId(accountId: number, nameOrId: string): Promise<DocumentRecord | undefined> {
      return (await getByName(accountId, nameOrId)) ?? (await getById(accountId, nameOrId));
    },

    /** Writes the changes of `svc.document.update`: not found when the document is gone, name taken by a race. */
    async update(accountId: number, documentId: string, patch: DocumentPatch): Promise<DocumentWrite> {
      try {
        return await db.transaction().execute(async (trx): Promise<DocumentWrite> => {
          const before = patch.name === undefined ? undefined : await trx.selectFrom("documents").select("name").where("accountId", "=", accountId).where("documentId", "=", documentId).executeTakeFirst();
          const r = await trx
            .updateTable("documents")
            .set(patch)
            .where("accountId", "=", accountId)
            .where("documentId", "=", documentId)
            .executeTakeFirst();
          if (Number(r.numUpdatedRows) !== 1) return { ok: false, reason: "not-found" };
          if (before && patch.name !== undefined) await recordRename(trx, { accountId, documentId, oldName: before.name, newName: patch.name, now: patch.updatedAt });
          // Access and state are read from the row at search time: only indexed fields are written again.
          if (INDEXED_FIELDS.some((f) => patch[f] !== undefined)) await index.indexFields(trx, documentId);
          return { ok: true };
        });
      } catch (err) {
        // The whole transaction is gone with the refused name: nothing half-written stays.
        if (dialect.isUniqueViolation(err)) return { ok: false, reason: "name-taken" };
        throw err;
      }
    },

    /**
     * Removes the account's documents of these names with their jobs, in one transaction per
     * chunk (bookmarks, embeds and search entries go by cascade). A documentId names its document too (decisions
     * §5), unless another document has it as its name; names of no document of the account are
     * passed over. Answers what was removed, for deleting the blobs under each `blobId`.
     */
    async deleteByNames(accountId: number, names: readonly string[], now: number = Date.now()): Promise<Array<{ documentId: string; blobId: string }>> {
      const removed: Array<{ documentId: string; blobId: string }> = [];
      for (let i = 0; i < names.length; i += NAME_CHUNK) {
        const chunk = names.slice(i, i + NAME_CHUNK);
        await db.transaction().execute(async (trx) => {
          const found = await trx
            .selectFrom("documents")
            .select(["documentId", "blobId", "name"])
            .where("accountId", "=", accountId)
            .where((w) => w.or([w("name", "in", chunk), w("documentId", "in", chunk)]))
            .execute();
          const asked = new Set(chunk);
          const named = new Set(found.map((r) => r.name).filter((n) => asked.has(n)));
          const rows = found
            .filter((r) => named.has(r.name) || !named.has(r.documentId))
            .map(({ documentId, blobId }) => ({ documentId, blobId }));
          if (rows.length === 0) return;
          const ids = rows.map((r) => r.documentId);
          // A new file converting beside the document goes with it (its row by cascade, its blobs by the caller).
          const replacing = await trx.selectFrom("documentReplacements").select(["documentId", "blobId"]).where("documentId", "in", ids).execute();
          await trx.deleteFrom("jobs").where("documentId", "in", ids).execute();
          // After the jobs go (the delivery job it writes must stay), before the records do (they are its body).
          await recordDocumentEvent(trx, { event: "document.deleted", accountId, now }, () => recordsIn(trx, ids));
          await trx.deleteFrom("documents").where("accountId", "=", accountId).where("documentId", "in", ids).execute();
          removed.push(...rows, ...replacing);
        });
      }
      return removed;
    },

    getById,

    /** A v2 draft with no file (decisions §14): the record alone, in state D, no job. */
    async insertDraft(doc: DocumentRecord): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto("documents").values(toRow({ ...doc, draft: true, state: "D" })).execute();
        await releaseName(trx, doc.accountId, doc.name);
        await index.indexFields(trx, doc.documentId);
      });
    },

    /**
     * A new original for a document no reader sees pages of (a v2 draft in D or F, or a failed
     * document): the record points at it and goes back to P with a conversion job, in one
     * transaction (src/domain/document-replacement.ts). Answers the blobId it replaced, whose files
     * the caller deletes; undefined when the document is not the account's, or is converting or published.
     */
    async restartWithOriginal(
      accountId: number,
      documentId: string,
      source: Pick<DocumentRecord, "origin" | "orgDocType" | "orgDocName" | "slurpUrl" | "originalSize" | "blobId">,
      now: number,
      requestId?: string,
    ): Promise<{ previousBlobId: string } | undefined> {
      return db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom("documents").select(["blobId", "state"])
          .where("accountId", "=", accountId).where("documentId", "=", documentId)
          .executeTakeFirst();
        if (!before || before.state === "P" || before.state === "A") return undefined;
        const r = await trx
          .updateTable("documents")
          .set({
            origin: source.origin, orgDocType: source.orgDocType, orgDocName: source.orgDocName, slurpUrl: source.slurpUrl,
            originalSize: source.originalSize, blobId: source.blobId, state: "P", pageCount: 0, coverWidth: 0, coverHeight: 0, errorCode: 0, errorMessage: "", updatedAt: now })
          .where("documentId", "=", documentId).where("state", "=", before.state)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) return undefined;
        await trx.deleteFrom("jobs").where("documentId", "=", documentId).where("kind", "=", "convert-document").execute();
        await queueJob(trx, "convert-document", documentId, accountId, now, requestId);
        return { previousBlobId: before.blobId };
      });
    },

    /**
     * F -> P for one of the account's failed documents, with a new conversion job of the same
     * original (kept when a conversion fails, conversion-steps.ts failDocument), in one transaction
     * guarded by the state: answers false when it is not the account's, or not failed (a second
     * press, another tab), and nothing changes then.
     */
    async retryFailed(accountId: number, documentId: string, now: number, requestId?: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable("documents")
          .set({ state: "P", pageCount: 0, coverWidth: 0, coverHeight: 0, errorCode: 0, errorMessage: "", updatedAt: now })
          .where("accountId", "=", accountId).where("documentId", "=", documentId).where("state", "=", "F").where("draft", "=", 0)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) return false;
        // The failed run's jobs (ended) make way for the new one: one conversion job per document.
        await trx.deleteFrom("jobs").where("documentId", "=", documentId).where("kind", "=", "convert-document").execute();
        await queueJob(trx, "convert-document", documentId, accountId, now, requestId);
        return true;
      });
    },

    /** The account's documents made since `sinceMs` (newest first, at most `limit`): the list's "new elsewhere" poll. */
    async recentOf(accountId: number, sinceMs: number, limit: number): Promise<DocumentRecord[]> {
      const rows = await selectRecords()
        .where("documents.accountId", "=", accountId)
        .where("documents.createdAt", ">", sinceMs)
        .where("documents.draft", "=", 0)
        .orderBy("documents.createdAt", "desc")
        .limit(limit)
        .execute();
      return rows.map(fromRow);
    },

    /**
     * D -> A for a converted v2 draft, with the fields its publish sets, and its `document.active`
     * event, in one transaction guarded by the state; not-found when it is no converted draft, name
     * taken when another document took the name meanwhile.
     */
    async publishDraft(accountId: number, documentId: string, patch: DocumentPatch): Promise<DocumentWrite> {
      try {
        return await db.transaction().execute(async (trx): Promise<DocumentWrite> => {
          const r = await trx
            .updateTable("documents")
            .set({ ...patch, state: "A", draft: 0 })
            .where("accountId", "=", accountId).where("documentId", "=", documentId)
            .where("draft", "=", 1).where("state", "=", "D")
            .executeTakeFirst();
          if (Number(r.numUpdatedRows) !== 1) return { ok: false, reason: "not-found" };
          if (INDEXED_FIELDS.some((f) => patch[f] !== undefined)) await index.indexFields(trx, documentId);
          await recordDocumentEvent(trx, { event: "document.active", accountId, now: patch.updatedAt }, () => recordsIn(trx, [documentId]));
          return { ok: true };
        });
      } catch (err) {
        if (dialect.isUniqueViolation(err)) return { ok: false, reason: "name-taken" };
        throw err;
      }
    },
  };
}
