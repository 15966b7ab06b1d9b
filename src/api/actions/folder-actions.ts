import type { ActionHandler } from "./action.ts";
import { bookmarkAdd } from "./bookmark-add.ts";
import { bookmarkDelete } from "./bookmark-delete.ts";
import { bookmarkUpdate } from "./bookmark-update.ts";
import { bookmarksList } from "./bookmarks-list.ts";
import { folderAdd } from "./folder-add.ts";
import { folderDelete } from "./folder-delete.ts";
import { folderUpdate } from "./folder-update.ts";
import { foldersList } from "./folders-list.ts";

/** The operations of this group, by name without prefix (registered in index.ts). */
export const FOLDER_ACTIONS: ReadonlyArray<readonly [string, ActionHandler]> = [
  ["folder.add", folderAdd],
  ["folder.update", folderUpdate],
  ["folder.delete", folderDelete],
  ["folders.list", foldersList],
  ["bookmark.add", bookmarkAdd],
  ["bookmark.update", bookmarkUpdate],
  ["bookmark.delete", bookmarkDelete],
  ["bookmarks.list", bookmarksList],
];
