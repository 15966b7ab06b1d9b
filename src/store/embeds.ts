import type { Kysely, Selectable } from "kysely";
import type { Database, EmbedsTable } from "./schema.ts";

export type EmbedRecord = Selectable<EmbedsTable>;

/** What an embed's owner may change (decisions §8, `svc.document_embed.update`). */
export interface EmbedChanges {
  documentId?: string;
  readerStartPage?: number;
  width?: number;
  height?: number;
}

export const EMBED_SORT_FIELDS = ["id", "created", "documentId", "readerStartPage", "width", "height"] as const;
export type EmbedSortField = (typeof EMBED_SORT_FIELDS)[number];

const SORT_COLUMN = {
  id: "id",
  created: "createdAt",
  documentId: "documentId",
  readerStartPage: "readerStartPage",
  width: "width",
  height: "height",
} as const satisfies Record<EmbedSortField, keyof EmbedsTable>;

export interface EmbedQuery {
  documentId: string | undefined;
  sortBy: EmbedSortField;
  order: "asc" | "desc";
  startIndex: number;
  /** 0 answers the count alone. */
  pageSize: number;
}

/** Ids are integer columns in both dialects: a larger number can name no embed (and must not reach PostgreSQL). */
const MAX_ID = 2_147_483_647;
const isStorableId = (id: number) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID;

/** Embeds of documents (decisions §8). Every read and write is scoped to the owning account. */
export function embedsRepo(db: Kysely<Database>) {
  return {
    async insert(e: Omit<EmbedRecord, "id" | "updatedAt">): Promise<EmbedRecord> {
      return db
        .insertInto("embeds")
        .values({ ...e, updatedAt: e.createdAt })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async get(accountId: number, id: number): Promise<EmbedRecord | undefined> {
      if (!isStorableId(id)) return undefined;
      return db.selectFrom("embeds").selectAll().where("accountId", "=", accountId).where("id", "=", id).executeTakeFirst();
    },

    /** The embed as changed, or undefined when the account has no such embed. */
    async update(accountId: number, id: number, changes: EmbedChanges, now: number): Promise<EmbedRecord | undefined> {
      if (!isStorableId(id)) return undefined;
      return db
        .updateTable("embeds")
        .set({ ...changes, updatedAt: now })
        .where("accountId", "=", accountId)
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst();
    },

    /** Whether an embed of the account was deleted. */
    async delete(accountId: number, id: number): Promise<boolean> {
      if (!isStorableId(id)) return false;
      const r = await db.deleteFrom("embeds").where("accountId", "=", accountId).where("id", "=", id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    /** One page of the account's embeds in a stable order (ties broken by id) and the total count. */
    async list(accountId: number, q: EmbedQuery): Promise<{ totalCount: number; items: EmbedRecord[] }> {
      let base = db.selectFrom("embeds").where("accountId", "=", accountId);
      if (q.documentId !== undefined) base = base.where("documentId", "=", q.documentId);
      const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      const totalCount = Number(count.n);
      if (q.pageSize === 0 || q.startIndex >= totalCount) return { totalCount, items: [] };
      let page = base.selectAll().orderBy(SORT_COLUMN[q.sortBy], q.order);
      if (q.sortBy !== "id") page = page.orderBy("id", q.order);
      const items = await page.limit(q.pageSize).offset(q.startIndex).execute();
      return { totalCount, items };
    },
  };
}
