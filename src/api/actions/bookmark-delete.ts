import { missing } from "../../domain/errors.ts";
import { parseList } from "../../domain/values.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/** `svc.bookmark.delete`: unknown ids (and other accounts') are passed over. */
export const bookmarkDelete: ActionHandler = async ({ params, caller, deps }) => {
  const value = params.get("bookmarkIds");
  if (value === undefined) throw missing("bookmarkIds");
  checkOutputParams(params);
  await deps.store.bookmarks.deleteMany(caller.accountId, parseList(value));
  return undefined;
};
