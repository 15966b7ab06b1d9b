import { MAX_DESCRIPTION_LENGTH, MAX_TITLE_LENGTH, text } from "../../domain/document-options.ts";
import { invalid, missing } from "../../domain/errors.ts";
import { bookmarkView } from "../bookmark-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";
import { assertPageExists, readPage } from "./bookmark-add.ts";

/** `svc.bookmark.update`: an unknown bookmark (or another account's) is 201 on bookmarkId. */
export const bookmarkUpdate: ActionHandler = async ({ params, caller, deps, now }) => {
  const get = params.get;
  const bookmarkId = get("bookmarkId");
  if (bookmarkId === undefined) throw missing("bookmarkId");
  const current = await deps.store.bookmarks.get(caller.accountId, bookmarkId);
  if (!current) throw invalid("bookmarkId");
  const title = text(get, "title", MAX_TITLE_LENGTH);
  const description = text(get, "description", MAX_DESCRIPTION_LENGTH);
  const page = readPage(get);
  checkOutputParams(params);
  if (page !== undefined) assertPageExists(page, current.documentPageCount);
  const updated = await deps.store.bookmarks.update(caller.accountId, bookmarkId, { title, description, page }, now);
  if (!updated) throw invalid("bookmarkId");
  return bookmarkView(updated);
};
