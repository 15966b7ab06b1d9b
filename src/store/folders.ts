import type { Kysely } from "kysely";
import type { StoreDialect } from "./dialects/dialect.ts";
import type { Database } from "./schema.ts";
import { compareText, type SortOrder } from "./text-order.ts";

/** A folder as answered (decisions §7): `items` counts the bookmarks a folder listing would show. */
export interface FolderRecord {
  folderId: string;
  accountId: number;
  username: string;
  name: string;
  description: string;
  items: number;
  createdAt: number;
  updatedAt: number;
}

export type FolderSortBy = "name" | "created" | "items";
export interface ListPage {
  sortBy: FolderSortBy;
  order: SortOrder;
  startIndex: number;
  pageSize: number;
}

/** What a write that may collide on the account's folder names reports. */
export type FolderWrite = { ok: true; folder: FolderRecord } | { ok: false; reason: "name-taken" | "not-found" };

export function foldersRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, "isUniqueViolation">) {
  /**
   * The account's folders with `items`: bookmarks whose document is active and still visible to
   * the folder's owner (its own, or another account's public one).
   */
  const selectFolders = (accountId: number) =>
    db
      .selectFrom("folders")
      .innerJoin("accounts", "accounts.id", "folders.accountId")
      .select([
        "folders.folderId", "folders.accountId", "accounts.username", "folders.name", "folders.description",
        "folders.createdAt", "folders.updatedAt",
      ])
      .select((eb) =>
        eb
          .selectFrom("bookmarkFolders")
          .innerJoin("bookmarks", "bookmarks.bookmarkId", "bookmarkFolders.bookmarkId")
          .innerJoin("documents", "documents.documentId", "bookmarks.documentId")
          .whereRef("bookmarkFolders.folderId", "=", "folders.folderId")
          .where("documents.state", "=", "A")
          .where((w) => w.or([w("documents.accountId", "=", accountId), w("documents.access", "=", "public")]))
          .select((s) => s.fn.countAll<number | string>().as("n"))
          .as("items"),
      )
      .where("folders.accountId", "=", accountId);

  type Row = Awaited<ReturnType<ReturnType<typeof selectFolders>["execute"]>>[number];
  const toRecord = (r: Row): FolderRecord => ({
    folderId: r.folderId, accountId: r.accountId, username: r.username, name: r.name, description: r.description,
    items: Number(r.items ?? 0), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
  });

  const get = async (accountId: number, folderId: string): Promise<FolderRecord | undefined> => {
    const row = await selectFolders(accountId).where("folders.folderId", "=", folderId).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  };

  const isNameTaken = async (accountId: number, name: string, exceptFolderId?: string): Promise<boolean> => {
    let q = db.selectFrom("folders").select("folderId").where("accountId", "=", accountId).where("name", "=", name);
    if (exceptFolderId !== undefined) q = q.where("folderId", "<>", exceptFolderId);
    return (await q.executeTakeFirst()) !== undefined;
  };

  return {
    async ownsAll(accountId: number, folderIds: string[]): Promise<boolean> {
      if (folderIds.length === 0) return true;
      const rows = await db
        .selectFrom("folders")
        .select("folderId")
        .where("accountId", "=", accountId)
        .where("folderId", "in", folderIds)
        .execute();
      return rows.length === folderIds.length;
    },

    get,
    isNameTaken,

    async create(accountId: number, folderId: string, fields: { name: string; description: string }, now: number): Promise<FolderWrite> {
      if (await isNameTaken(accountId, fields.name)) return { ok: false, reason: "name-taken" };
      try {
        await db
          .insertInto("folders")
          .values({ folderId, accountId, name: fields.name, description: fields.description, createdAt: now, updatedAt: now })
          .execute();
      } catch (err) {
        // Two requests raced for the same name: the loser's name is taken, as the check would have said.
        if (dialect.isUniqueViolation(err)) return { ok: false, reason: "name-taken" };
        throw err;
      }
      return { ok: true, folder: (await get(accountId, folderId))! };
    },

    /** Fields left undefined stay as they are; a change moves `updatedAt` (the folder's `ep`). */
    async update(
      accountId: number,
      folderId: string,
      fields: { name: string | undefined; description: string | undefined },
      now: number,
    ): Promise<FolderWrite> {
      const current = await get(accountId, folderId);
      if (!current) return { ok: false, reason: "not-found" };
      if (fields.name !== undefined && (await isNameTaken(accountId, fields.name, folderId))) return { ok: false, reason: "name-taken" };
      const changes = {
        ...(fields.name !== undefined && fields.name !== current.name ? { name: fields.name } : {}),
        ...(fields.description !== undefined && fields.description !== current.description ? { description: fields.description } : {}),
      };
      if (Object.keys(changes).length === 0) return { ok: true, folder: current };
      try {
        await db
          .updateTable("folders")
          .set({ ...changes, updatedAt: now })
          .where("accountId", "=", accountId)
          .where("folderId", "=", folderId)
          .execute();
      } catch (err) {
        if (dialect.isUniqueViolation(err)) return { ok: false, reason: "name-taken" };
        throw err;
      }
      const folder = await get(accountId, folderId);
      return folder ? { ok: true, folder } : { ok: false, reason: "not-found" };
    },

    /** Ids of other accounts or of no folder are passed over; bookmarks leave the folders, documents stay. */
    async deleteMany(accountId: number, folderIds: string[]): Promise<number> {
      if (folderIds.length === 0) return 0;
      return db.transaction().execute(async (trx) => {
        const owned = (
          await trx.selectFrom("folders").select("folderId").where("accountId", "=", accountId).where("folderId", "in", folderIds).execute()
        ).map((r) => r.folderId);
        if (owned.length === 0) return 0;
        await trx.deleteFrom("bookmarkFolders").where("folderId", "in", owned).execute();
        await trx.deleteFrom("folders").where("accountId", "=", accountId).where("folderId", "in", owned).execute();
        return owned.length;
      });
    },

    /**
     * One page of the account's folders, sorted stably (ties broken by `folderId`, in the same
     * direction, so `desc` is `asc` reversed). Sorted here rather than in SQL so that names
     * order by code point in both dialects whatever the database's collation.
     */
    async listPage(accountId: number, page: ListPage): Promise<{ totalCount: number; items: FolderRecord[] }> {
      const all = (await selectFolders(accountId).execute()).map(toRecord);
      const key: Record<FolderSortBy, (a: FolderRecord, b: FolderRecord) => number> = {
        name: (a, b) => compareText(a.name, b.name),
        created: (a, b) => a.createdAt - b.createdAt,
        items: (a, b) => a.items - b.items,
      };
      const sign = page.order === "asc" ? 1 : -1;
      all.sort((a, b) => sign * (key[page.sortBy](a, b) || compareText(a.folderId, b.folderId)));
      return { totalCount: all.length, items: all.slice(page.startIndex, page.startIndex + page.pageSize) };
    },
  };
}
