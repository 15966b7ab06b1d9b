import type { Kysely } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import type { StoreDialect } from "./dialects/dialect.ts";
import { listedPublicly } from "./document-rows.ts";
import { recordsIn } from "./documents.ts";
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
  /** Shown on the owner's public profile (issue 26 item 9); off unless the publisher chose it. */
  onProfile: boolean;
}

/** A folder as its owner's public pages show it: `publicItems` counts only public, active documents. */
export interface PublicFolder {
  folderId: string;
  name: string;
  description: string;
  publicItems: number;
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
        "folders.createdAt", "folders.updatedAt", "folders.onProfile",
      ])
      .select((eb) =>
        eb
          .selectFrom("bookmarkFolders")
          .innerJoin("bookmarks", "bookmarks.bookmarkId", "bookmarkFolders.bookmarkId")
          .innerJoin("documents", "documents.documentId", "bookmarks.documentId")
          .whereRef("bookmarkFolders.folderId", "=", "folders.folderId")
          .where((w) => w.or([w.and([w("documents.accountId", "=", accountId), w("documents.state", "=", "A")]), listedPublicly]))
          .select((s) => s.fn.countAll<number | string>().as("n"))
          .as("items"),
      )
      .where("folders.accountId", "=", accountId);

  type Row = Awaited<ReturnType<ReturnType<typeof selectFolders>["execute"]>>[number];
  const toRecord = (r: Row): FolderRecord => ({
    folderId: r.folderId, accountId: r.accountId, username: r.username, name: r.name, description: r.description,
    items: Number(r.items ?? 0), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt), onProfile: Number(r.onProfile) === 1,
  });

  /**
   * The documents a public page of the folder may list: bookmarked in it by its owner, public,
   * active and published (a v2 draft never is). Another account's public document bookmarked
   * here counts too, as it does in the folder's `items`.
   */
  const publicDocumentsIn = (folderId: string) =>
    db
      .selectFrom("bookmarkFolders")
      .innerJoin("folders", "folders.folderId", "bookmarkFolders.folderId")
      .innerJoin("bookmarks", (j) => j.onRef("bookmarks.bookmarkId", "=", "bookmarkFolders.bookmarkId").onRef("bookmarks.accountId", "=", "folders.accountId"))
      .innerJoin("documents", "documents.documentId", "bookmarks.documentId")
      .where("bookmarkFolders.folderId", "=", folderId)
      .where(listedPublicly);

  const get = async (accountId: number, folderId: string): Promise<FolderRecord | undefined> => {
    const row = await selectFolders(accountId).where("folders.folderId", "=", folderId).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  };

  const shownFolders = async (accountId: number, folderId?: string): Promise<PublicFolder[]> => {
    let q = db
      .selectFrom("folders")
      .select(["folders.folderId", "folders.name", "folders.description"])
      .select((eb) =>
        eb
          .selectFrom("bookmarkFolders")
          .innerJoin("bookmarks", "bookmarks.bookmarkId", "bookmarkFolders.bookmarkId")
          .innerJoin("documents", "documents.documentId", "bookmarks.documentId")
          .whereRef("bookmarkFolders.folderId", "=", "folders.folderId")
          .whereRef("bookmarks.accountId", "=", "folders.accountId")
          .where(listedPublicly)
          .select((c) => c.fn.count<number | string>("documents.documentId").distinct().as("n"))
          .as("publicItems"),
      )
      .where("folders.accountId", "=", accountId)
      .where("folders.onProfile", "=", 1);
    if (folderId !== undefined) q = q.where("folders.folderId", "=", folderId);
    const rows = await q.execute();
    return rows
      .map((r) => ({ folderId: r.folderId, name: r.name, description: r.description, publicItems: Number(r.publicItems ?? 0) }))
      .sort((a, b) => compareText(a.name, b.name) || compareText(a.folderId, b.folderId));
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

    /** Shows or hides the folder on the owner's profile; false when the account has no such folder. */
    async setOnProfile(accountId: number, folderId: string, onProfile: boolean): Promise<boolean> {
      const r = await db
        .updateTable("folders")
        .set({ onProfile: onProfile ? 1 : 0 })
        .where("accountId", "=", accountId)
        .where("folderId", "=", folderId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** The account's folders shown on its profile, by name (code point order, as the app lists them). */
    shownOnProfile: (accountId: number) => shownFolders(accountId),

    /** The account's folder if it is shown on the profile; another account's or a hidden one: undefined. */
    async publicFolder(accountId: number, folderId: string): Promise<PublicFolder | undefined> {
      return (await shownFolders(accountId, folderId))[0];
    },

    /**
     * One page of a shown folder's public documents, newest placement first (a document
     * bookmarked twice is listed once). The caller checks the folder is shown.
     */
    async publicDocuments(folderId: string, offset: number, limit: number): Promise<{ totalCount: number; records: DocumentRecord[] }> {
      const placed = await publicDocumentsIn(folderId)
        .select("documents.documentId")
        .select((eb) => eb.fn.max("bookmarkFolders.addedAt").as("addedAt"))
        .groupBy("documents.documentId")
        .execute();
      placed.sort((a, b) => Number(b.addedAt) - Number(a.addedAt) || compareText(a.documentId, b.documentId));
      const ids = placed.slice(offset, offset + limit).map((r) => r.documentId);
      if (ids.length === 0) return { totalCount: placed.length, records: [] };
      const byId = new Map((await recordsIn(db, ids)).map((d) => [d.documentId, d]));
      return { totalCount: placed.length, records: ids.map((id) => byId.get(id)).filter((d): d is DocumentRecord => d !== undefined) };
    },

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
