import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { listedPublicly } from "./document-rows.ts";
import { compareText, type SortOrder } from "./text-order.ts";
import type { Database } from "./schema.ts";

/** A bookmark as answered (decisions §7), with its document's owner, name and state. */
export interface BookmarkRecord {
  bookmarkId: string;
  accountId: number;
  username: string;
  documentId: string;
  documentUsername: string;
  name: string;
  title: string;
  description: string;
  page: number;
  createdAt: number;
  updatedAt: number;
  /** Folder ids, oldest placement first (ties by id). */
  folderIds: string[];
  documentState: string;
  documentPageCount: number;
}

/** The document a bookmark may point to, as `bookmark.add` needs it. */
export interface BookmarkableDocument {
  documentId: string;
  accountId: number;
  title: string;
  description: string;
  state: string;
  pageCount: number;
}

export type BookmarkSortBy = "title" | "name" | "page" | "created" | "documentUsername";

/** Which of the account's bookmarks a listing shows: all, those in no folder, or one folder's. */
export type BookmarkScope = { kind: "all" } | { kind: "unfiled" } | { kind: "folder"; folderId: string };

export interface BookmarkPage {
  scope: BookmarkScope;
  sortBy: BookmarkSortBy;
  order: SortOrder;
  startIndex: number;
  pageSize: number;
}

export function bookmarksRepo(db: Kysely<Database>) {
  /**
   * The account's bookmarks whose document it may still see: its own documents in any state,
   * another account's only while public and active.
   */
  const selectBookmarks = (accountId: number) =>
    db
      .selectFrom("bookmarks")
      .innerJoin("accounts as owner", "owner.id", "bookmarks.accountId")
      .innerJoin("documents", "documents.documentId", "bookmarks.documentId")
      .innerJoin("accounts as docOwner", "docOwner.id", "documents.accountId")
      .select([
        "bookmarks.bookmarkId", "bookmarks.accountId", "owner.username as username", "bookmarks.documentId",
        "docOwner.username as documentUsername", "documents.name", "bookmarks.title", "bookmarks.description",
        "bookmarks.page", "bookmarks.createdAt", "bookmarks.updatedAt", "documents.state as documentState",
        "documents.pageCount as documentPageCount",
      ])
      .where("bookmarks.accountId", "=", accountId)
      .where((w) =>
        w.or([w("documents.accountId", "=", accountId), listedPublicly]),
      );

  type Row = Awaited<ReturnType<ReturnType<typeof selectBookmarks>["execute"]>>[number];

  const withFolders = async (rows: Row[]): Promise<BookmarkRecord[]> => {
    if (rows.length === 0) return [];
    const links = await db
      .selectFrom("bookmarkFolders")
      .select(["bookmarkId", "folderId", "addedAt"])
      .where("bookmarkId", "in", rows.map((r) => r.bookmarkId))
      .execute();
    links.sort((a, b) => Number(a.addedAt) - Number(b.addedAt) || compareText(a.folderId, b.folderId));
    const byBookmark = new Map<string, string[]>();
    for (const l of links) byBookmark.set(l.bookmarkId, [...(byBookmark.get(l.bookmarkId) ?? []), l.folderId]);
    return rows.map((r) => ({
      ...r,
      page: Number(r.page),
      createdAt: Number(r.createdAt),
      updatedAt: Number(r.updatedAt),
      documentPageCount: Number(r.documentPageCount),
      folderIds: byBookmark.get(r.bookmarkId) ?? [],
    }));
  };

  const get = async (accountId: number, bookmarkId: string): Promise<BookmarkRecord | undefined> => {
    const rows = await selectBookmarks(accountId).where("bookmarks.bookmarkId", "=", bookmarkId).execute();
    return (await withFolders(rows))[0];
  };

  /** One bookmark and its folder placements, in the transaction given. */
  const insert = async (
    trx: Kysely<Database>,
    b: { bookmarkId: string; accountId: number; documentId: string; title: string; description: string; page: number },
    folderIds: string[],
    now: number,
  ): Promise<void> => {
    await trx.insertInto("bookmarks").values({ ...b, createdAt: now, updatedAt: now }).execute();
    if (folderIds.length > 0) {
      // A bookmark answers its folders oldest placement first; one millisecond apart within a
      // request keeps them in the order the caller gave, rather than by random folder id.
      await trx
        .insertInto("bookmarkFolders")
        .values(folderIds.map((folderId, i) => ({ bookmarkId: b.bookmarkId, folderId, addedAt: now + i })))
        .execute();
    }
  };

  return {
    get,

    /**
     * The document `bookmark.add` names: the caller's own in any state, another account's only
     * if public and active; anything else is as if it did not exist. `name` may be the
     * documentId (decisions §5); a document of that name wins over one of that id.
     */
    async findBookmarkable(accountId: number, documentUsername: string, name: string): Promise<BookmarkableDocument | undefined> {
      const row = await db
        .selectFrom("documents")
        .innerJoin("accounts", "accounts.id", "documents.accountId")
        .select(["documents.documentId", "documents.accountId", "documents.title", "documents.description", "documents.state", "documents.pageCount"])
        .where("accounts.username", "=", documentUsername)
        .where((w) => w.or([w("documents.name", "=", name), w("documents.documentId", "=", name)]))
        .where((w) =>
          w.or([w("documents.accountId", "=", accountId), listedPublicly]),
        )
        .orderBy(sql`case when documents.name = ${name} then 0 else 1 end`)
        .executeTakeFirst();
      return row ? { ...row, pageCount: Number(row.pageCount) } : undefined;
    },

    /** The folders of the account that hold one of its bookmarks of this document (the app's "Folders" block of a document). */
    async foldersOfDocument(accountId: number, documentId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("bookmarks")
        .innerJoin("bookmarkFolders", "bookmarkFolders.bookmarkId", "bookmarks.bookmarkId")
        .select("bookmarkFolders.folderId")
        .distinct()
        .where("bookmarks.accountId", "=", accountId)
        .where("bookmarks.documentId", "=", documentId)
        .execute();
      return rows.map((r) => r.folderId);
    },

    /**
     * Puts the document in exactly these of the account's folders (checked by the caller): a new
     * bookmark at page 1 in those it is not in; out of the others, where a bookmark that was only
     * there goes with it (one placed elsewhere too, or in no folder at all, stays). One transaction.
     */
    async setDocumentFolders(accountId: number, doc: BookmarkableDocument, folderIds: readonly string[], newBookmarkId: () => string, now: number): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const links = await trx
          .selectFrom("bookmarks")
          .innerJoin("bookmarkFolders", "bookmarkFolders.bookmarkId", "bookmarks.bookmarkId")
          .select(["bookmarks.bookmarkId", "bookmarkFolders.folderId"])
          .where("bookmarks.accountId", "=", accountId)
          .where("bookmarks.documentId", "=", doc.documentId)
          .execute();
        const wanted = new Set(folderIds);
        const have = new Set(links.map((l) => l.folderId));
        for (const l of links.filter((x) => !wanted.has(x.folderId))) {
          await trx.deleteFrom("bookmarkFolders").where("bookmarkId", "=", l.bookmarkId).where("folderId", "=", l.folderId).execute();
          const left = await trx.selectFrom("bookmarkFolders").select("folderId").where("bookmarkId", "=", l.bookmarkId).executeTakeFirst();
          if (!left) await trx.deleteFrom("bookmarks").where("bookmarkId", "=", l.bookmarkId).execute();
        }
        const add = folderIds.filter((f) => !have.has(f));
        if (add.length > 0) {
          await insert(trx, { bookmarkId: newBookmarkId(), accountId, documentId: doc.documentId, title: doc.title, description: doc.description, page: 1 }, [...add], now);
        }
      });
    },

    /** The folder ids must be the account's (checked by the caller); placed in one transaction. */
    async add(
      accountId: number,
      bookmarkId: string,
      doc: BookmarkableDocument,
      page: number,
      folderIds: string[],
      now: number,
    ): Promise<BookmarkRecord> {
      await db.transaction().execute((trx) =>
        insert(trx, { bookmarkId, accountId, documentId: doc.documentId, title: doc.title, description: doc.description, page }, folderIds, now),
      );
      return (await get(accountId, bookmarkId))!;
    },

    /**
     * For the P -> A transaction of a document uploaded with `folderIds` (decisions §7): one
     * bookmark at page 1 with the document's title and description, placed in those of the folders
     * that still exist and belong to the document's account. None left: no bookmark. Answers the
     * new bookmark's id, or undefined.
     */
    async addForActivatedDocument(
      trx: Kysely<Database>,
      doc: { documentId: string; accountId: number; title: string; description: string },
      folderIds: string[],
      now: number,
    ): Promise<string | undefined> {
      if (folderIds.length === 0) return undefined;
      const existing = new Set(
        (
          await trx.selectFrom("folders").select("folderId").where("accountId", "=", doc.accountId).where("folderId", "in", folderIds).execute()
        ).map((r) => r.folderId),
      );
      const kept = folderIds.filter((id) => existing.has(id));
      if (kept.length === 0) return undefined;
      const bookmarkId = randomUUID();
      await insert(trx, { bookmarkId, accountId: doc.accountId, documentId: doc.documentId, title: doc.title, description: doc.description, page: 1 }, kept, now);
      return bookmarkId;
    },

    /** Fields left undefined stay as they are. */
    async update(
      accountId: number,
      bookmarkId: string,
      fields: { title: string | undefined; description: string | undefined; page: number | undefined },
      now: number,
    ): Promise<BookmarkRecord | undefined> {
      const changes = {
        ...(fields.title !== undefined ? { title: fields.title } : {}),
        ...(fields.description !== undefined ? { description: fields.description } : {}),
        ...(fields.page !== undefined ? { page: fields.page } : {}),
      };
      if (Object.keys(changes).length > 0) {
        await db
          .updateTable("bookmarks")
          .set({ ...changes, updatedAt: now })
          .where("accountId", "=", accountId)
          .where("bookmarkId", "=", bookmarkId)
          .execute();
      }
      return get(accountId, bookmarkId);
    },

    /** Ids of other accounts or of no bookmark are passed over. */
    async deleteMany(accountId: number, bookmarkIds: string[]): Promise<number> {
      if (bookmarkIds.length === 0) return 0;
      return db.transaction().execute(async (trx) => {
        const owned = (
          await trx.selectFrom("bookmarks").select("bookmarkId").where("accountId", "=", accountId).where("bookmarkId", "in", bookmarkIds).execute()
        ).map((r) => r.bookmarkId);
        if (owned.length === 0) return 0;
        await trx.deleteFrom("bookmarkFolders").where("bookmarkId", "in", owned).execute();
        await trx.deleteFrom("bookmarks").where("bookmarkId", "in", owned).execute();
        return owned.length;
      });
    },

    /**
     * One page of the account's bookmarks. A folder's listing shows only active documents
     * (decisions §7); ties are broken by `bookmarkId` in the same direction.
     */
    async listPage(accountId: number, page: BookmarkPage): Promise<{ totalCount: number; items: BookmarkRecord[] }> {
      let q = selectBookmarks(accountId);
      const { scope } = page;
      if (scope.kind === "folder") {
        q = q
          .where("documents.state", "=", "A")
          .where((w) =>
            w.exists(
              w.selectFrom("bookmarkFolders").select("bookmarkFolders.folderId")
                .whereRef("bookmarkFolders.bookmarkId", "=", "bookmarks.bookmarkId")
                .where("bookmarkFolders.folderId", "=", scope.folderId),
            ),
          );
      } else if (scope.kind === "unfiled") {
        q = q.where((w) =>
          w.not(w.exists(w.selectFrom("bookmarkFolders").select("bookmarkFolders.folderId").whereRef("bookmarkFolders.bookmarkId", "=", "bookmarks.bookmarkId"))),
        );
      }
      const rows = await q.execute();
      const key: Record<BookmarkSortBy, (a: Row, b: Row) => number> = {
        title: (a, b) => compareText(a.title, b.title),
        name: (a, b) => compareText(a.name, b.name),
        page: (a, b) => Number(a.page) - Number(b.page),
        created: (a, b) => Number(a.createdAt) - Number(b.createdAt),
        documentUsername: (a, b) => compareText(a.documentUsername, b.documentUsername),
      };
      const sign = page.order === "asc" ? 1 : -1;
      rows.sort((a, b) => sign * (key[page.sortBy](a, b) || compareText(a.bookmarkId, b.bookmarkId)));
      return { totalCount: rows.length, items: await withFolders(rows.slice(page.startIndex, page.startIndex + page.pageSize)) };
    },
  };
}
