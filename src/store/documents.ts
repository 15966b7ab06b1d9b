import { sql, type Kysely, type Selectable, type Updateable } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import type { JobKind } from "../domain/job-kinds.ts";
import type { StoreDialect } from "./dialects/dialect.ts";
import { bookmarksRepo } from "./bookmarks.ts";
import type { Database, DocumentsTable } from "./schema.ts";

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
  access?: string;
  states?: readonly string[];
  orgDocTypes?: readonly string[];
  origins?: readonly string[];
  orgDocName?: string;
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

type Row = Selectable<DocumentsTable>;

export function toRow(d: DocumentRecord): Row {
  return {
    documentId: d.documentId, revisionId: d.revisionId, publicationId: d.publicationId, accountId: d.accountId,
    name: d.name, nameGiven: d.nameGiven ? 1 : 0, title: d.title, description: d.description,
    descriptionGiven: d.descriptionGiven ? 1 : 0, access: d.access, state: d.state, category: d.category,
    type: d.type, language: d.language, orgDocType: d.orgDocType, orgDocName: d.orgDocName, origin: d.origin,
    pageCount: d.pageCount, publishDate: d.publishDate, createdAt: d.createdAt, updatedAt: d.updatedAt,
    tags: JSON.stringify(d.tags), folderIds: JSON.stringify(d.folderIds), commentsAllowed: d.commentsAllowed ? 1 : 0,
    ratingsAllowed: d.ratingsAllowed ? 1 : 0, downloadable: d.downloadable ? 1 : 0, explicit: d.explicit ? 1 : 0,
    infoLink: d.infoLink, soundUrl: d.soundUrl, slurpUrl: d.slurpUrl, coverWidth: d.coverWidth,
    coverHeight: d.coverHeight, errorCode: d.errorCode, errorMessage: d.errorMessage, blobId: d.blobId,
    originalSize: d.originalSize,
  };
}

export function fromRow(r: Row & { username: string }): DocumentRecord {
  return {
    ...r,
    nameGiven: r.nameGiven === 1,
    descriptionGiven: r.descriptionGiven === 1,
    access: r.access as DocumentRecord["access"],
    state: r.state as DocumentRecord["state"],
    orgDocType: r.orgDocType as DocumentRecord["orgDocType"],
    origin: r.origin as DocumentRecord["origin"],
    tags: JSON.parse(r.tags) as string[],
    folderIds: JSON.parse(r.folderIds) as string[],
    commentsAllowed: r.commentsAllowed === 1,
    ratingsAllowed: r.ratingsAllowed === 1,
    downloadable: r.downloadable === 1,
    explicit: r.explicit === 1,
  };
}

/** Names a unique-constraint failure in either dialect, so a race on `name` is answered as taken. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return e?.code === "23505" || e?.code === "SQLITE_CONSTRAINT_UNIQUE" || e?.code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

export function documentsRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, "orderableText">) {
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

  return {
    /** The record and its conversion job in one transaction: a crash can never leave one without the other. */
    async insertWithJob(doc: DocumentRecord, jobKind: JobKind, requestId?: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto("documents").values(toRow(doc)).execute();
        await trx
          .insertInto("jobs")
          .values({
            kind: jobKind, documentId: doc.documentId, accountId: doc.accountId, state: "queued", attempts: 0, runAt: doc.createdAt,
            leaseUntil: null, leaseOwner: null, lastError: "", createdAt: doc.createdAt, updatedAt: doc.createdAt, requestId: requestId ?? null,
          })
          .execute();
      });
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
    async recordFetchedOriginal(documentId: string, orgDocType: string, originalSize: number, now: number): Promise<boolean> {
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
     */
    async markActive(
      documentId: string,
      result: { pageCount: number; coverWidth: number; coverHeight: number; description: string | undefined; name: string | undefined },
      now: number,
    ): Promise<boolean> {
      // P -> A and the bookmarks in the folders the upload named, together (decisions §7).
      return db.transaction().execute(async (trx) => {
        const activated = await trx
          .updateTable("documents")
          .set({
            state: "A",
            pageCount: result.pageCount,
            coverWidth: result.coverWidth,
            coverHeight: result.coverHeight,
            // An update during conversion may have set them since the worker read the record: the caller's wins.
            ...(result.description !== undefined
              ? { description: sql<string>`case when description_given = 1 then description else ${result.description} end` }
              : {}),
            ...(result.name !== undefined
              ? { name: sql<string>`case when name_given = 1 or access <> 'public' then name else ${result.name} end` }
              : {}),
            updatedAt: now,
          })
          .where("documentId", "=", documentId)
          .where("state", "=", "P")
          .returning(["accountId", "title", "description", "folderIds"])
          .executeTakeFirst();
        if (!activated) return false;
        const folderIds = JSON.parse(activated.folderIds) as string[];
        await bookmarksRepo(trx).addForActivatedDocument(trx, { documentId, ...activated }, folderIds, now);
        return true;
      });
    },

    async markFailed(documentId: string, errorCode: number, errorMessage: string, now: number): Promise<boolean> {
      const r = await db
        .updateTable("documents")
        .set({ state: "F", errorCode, errorMessage, updatedAt: now })
        .where("documentId", "=", documentId)
        .where("state", "=", "P")
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
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

    /** Writes the changes of `svc.document.update`; false when the document is gone. */
    async update(accountId: number, documentId: string, patch: DocumentPatch): Promise<boolean> {
      const r = await db
        .updateTable("documents")
        .set(patch)
        .where("accountId", "=", accountId)
        .where("documentId", "=", documentId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    /**
     * Removes the account's documents of these names with their jobs, in one transaction per
     * chunk (bookmarks and embeds go by cascade). A documentId names its document too (decisions
     * §5), unless another document has it as its name; names of no document of the account are
     * passed over. Answers what was removed, for deleting the blobs under each `blobId`.
     */
    async deleteByNames(accountId: number, names: readonly string[]): Promise<Array<{ documentId: string; blobId: string }>> {
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
          await trx.deleteFrom("jobs").where("documentId", "in", ids).execute();
          await trx.deleteFrom("documents").where("accountId", "=", accountId).where("documentId", "in", ids).execute();
          removed.push(...rows);
        });
      }
      return removed;
    },

    getById,
  };
}

export type DocumentsRepo = ReturnType<typeof documentsRepo>;
