import { randomUUID } from "node:crypto";
import { readFolderFields } from "../../domain/folders.ts";
import { missing, QuireError } from "../../domain/errors.ts";
import { folderView } from "../folder-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/** `svc.folder.add` (decisions §7, §8): a name the account already uses is 261. */
export const folderAdd: ActionHandler = async ({ params, caller, deps, now }) => {
  if (params.get("folderName") === undefined) throw missing("folderName");
  const { name, description } = readFolderFields(params.get);
  checkOutputParams(params);
  const written = await deps.store.folders.create(caller.accountId, randomUUID(), { name: name!, description: description ?? "" }, now);
  if (!written.ok) throw new QuireError("261");
  return folderView(written.folder);
};
