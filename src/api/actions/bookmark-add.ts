import { randomUUID } from "node:crypto";
import { wholeNumber, type ParamGetter } from "../../domain/document-options.ts";
import { invalid, missing, QuireError } from "../../domain/errors.ts";
import { isValidDocumentName, isValidUsername, parseList } from "../../domain/values.ts";
import { bookmarkView } from "../bookmark-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/** `page`: a whole number from 1, else 201; absent is undefined. */
export function readPage(get: ParamGetter): number | undefined {
  return wholeNumber(get, "page", 1, 999_999_999);
}

/**
 * The last page a bookmark may point to: the document's page count, or 1 while it has none yet
 * (a document still processing, or failed, can be bookmarked at its first page only).
 */
export function assertPageExists(page: number, pageCount: number): void {
  if (page > Math.max(pageCount, 1)) throw new QuireError("311");
}

/**
 * `svc.bookmark.add`: a bookmark to the caller's own document (any state) or to another
 * account's public, active one; any other is 300, as if it did not exist.
 */
export const bookmarkAdd: ActionHandler = async ({ params, caller, deps, now }) => {
  const get = params.get;
  const documentUsername = get("documentUsername");
  if (documentUsername === undefined) throw missing("documentUsername");
  if (!isValidUsername(documentUsername)) throw invalid("documentUsername");
  const name = get("name");
  if (name === undefined) throw missing("name");
  if (!isValidDocumentName(name)) throw invalid("name");
  const page = readPage(get) ?? 1;
  const folderIds = parseList(get("folderIds") ?? "");
  if (!(await deps.store.folders.ownsAll(caller.accountId, folderIds))) throw invalid("folderIds");
  checkOutputParams(params);
  const doc = await deps.store.bookmarks.findBookmarkable(caller.accountId, documentUsername, name);
  if (!doc) throw new QuireError("300");
  assertPageExists(page, doc.pageCount);
  return bookmarkView(await deps.store.bookmarks.add(caller.accountId, randomUUID(), doc, page, folderIds, now));
};
