import { missing } from "../../domain/errors.ts";
import { parseList } from "../../domain/values.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/** `svc.folder.delete`: unknown ids are passed over; bookmarks leave the folders, documents stay. */
export const folderDelete: ActionHandler = async ({ params, caller, deps }) => {
  const value = params.get("folderIds");
  if (value === undefined) throw missing("folderIds");
  checkOutputParams(params);
  await deps.store.folders.deleteMany(caller.accountId, parseList(value));
  return undefined;
};
