import type { FolderSortBy } from "../../store/folders.ts";
import { FOLDER_FIELDS, folderView } from "../folder-view.ts";
import { readListTail, resultList } from "../list-params.ts";
import type { ActionHandler } from "./action.ts";

const SORT_FIELDS: readonly FolderSortBy[] = ["name", "created", "items"];

/** `svc.folders.list`: the account's folders, by creation unless `folderSortBy` says otherwise. */
export const foldersList: ActionHandler = async ({ params, caller, deps }) => {
  const { sortBy, order, window, keep } = readListTail(params, { field: "folderSortBy", allowed: SORT_FIELDS, fallback: "created" }, FOLDER_FIELDS);
  const { totalCount, items } = await deps.store.folders.listPage(caller.accountId, { sortBy, order, ...window });
  return resultList(items.map(folderView), totalCount, window, keep);
};
