import { invalid } from "../../domain/errors.ts";
import type { BookmarkScope, BookmarkSortBy } from "../../store/bookmarks.ts";
import { BOOKMARK_FIELDS, bookmarkView } from "../bookmark-view.ts";
import { readListTail, resultList } from "../list-params.ts";
import type { ActionHandler } from "./action.ts";

const SORT_FIELDS: readonly BookmarkSortBy[] = ["title", "name", "page", "created", "documentUsername"];

/**
 * `svc.bookmarks.list`: `folderId` absent lists all the account's bookmarks, present but empty
 * those in no folder (hence `raw`, which tells empty from absent), given that folder's, where
 * only active documents show (decisions §7).
 */
export const bookmarksList: ActionHandler = async ({ params, caller, deps }) => {
  const folderId = params.raw("folderId");
  let scope: BookmarkScope;
  if (folderId === undefined) scope = { kind: "all" };
  else if (folderId === "") scope = { kind: "unfiled" };
  else if (await deps.store.folders.get(caller.accountId, folderId)) scope = { kind: "folder", folderId };
  else throw invalid("folderId");
  const { sortBy, order, window, keep } = readListTail(params, { field: "bookmarkSortBy", allowed: SORT_FIELDS, fallback: "created" }, BOOKMARK_FIELDS);
  const { totalCount, items } = await deps.store.bookmarks.listPage(caller.accountId, { scope, sortBy, order, ...window });
  return resultList(items.map(bookmarkView), totalCount, window, keep);
};
