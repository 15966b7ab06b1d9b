import { formatDate } from "../domain/values.ts";
import type { BookmarkRecord } from "../store/bookmarks.ts";
import type { Resource } from "./payload.ts";

/** The fields a bookmark answers, in order (decisions §7); also the names `responseParams` accepts. */
export const BOOKMARK_FIELDS = [
  "bookmarkId", "username", "documentId", "documentUsername", "name", "title", "description", "page", "created", "folders",
] as const;

export function bookmarkView(b: BookmarkRecord): Resource {
  return {
    tag: "bookmark",
    fields: [
      ["bookmarkId", b.bookmarkId],
      ["username", b.username],
      ["documentId", b.documentId],
      ["documentUsername", b.documentUsername],
      ["name", b.name],
      ["title", b.title],
      ["description", b.description],
      ["page", b.page],
      ["created", formatDate(b.createdAt)],
      ["folders", { list: b.folderIds, itemTag: "folder", itemAttr: "id" }],
    ],
  };
}
