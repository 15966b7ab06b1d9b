import { randomUUID } from "node:crypto";
import { MAX_DESCRIPTION_LENGTH, text } from "../../domain/document-options.ts";
import { missing, QuireError } from "../../domain/errors.ts";
import { folderView } from "../folder-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

export const MAX_FOLDER_NAME_LENGTH = 100;

/** `svc.folder.add` (decisions §7, §8): a name the account already uses is 261. */
export const folderAdd: ActionHandler = async ({ params, caller, deps, now }) => {
  const name = text(params.get, "folderName", MAX_FOLDER_NAME_LENGTH);
  if (name === undefined) throw missing("folderName");
  const description = text(params.get, "folderDescription", MAX_DESCRIPTION_LENGTH) ?? "";
  checkOutputParams(params);
  const written = await deps.store.folders.create(caller.accountId, randomUUID(), { name, description }, now);
  if (!written.ok) throw new QuireError("261");
  return folderView(written.folder);
};
