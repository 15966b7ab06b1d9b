import { readFolderFields } from "../../domain/folders.ts";
import { invalid, missing, QuireError } from "../../domain/errors.ts";
import { folderView } from "../folder-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/** `svc.folder.update`: an unknown folder (or another account's) is 201 on folderId; omitted fields stay. */
export const folderUpdate: ActionHandler = async ({ params, caller, deps, now }) => {
  const folderId = params.get("folderId");
  if (folderId === undefined) throw missing("folderId");
  if (!(await deps.store.folders.get(caller.accountId, folderId))) throw invalid("folderId");
  const { name, description } = readFolderFields(params.get);
  checkOutputParams(params);
  const written = await deps.store.folders.update(caller.accountId, folderId, { name, description }, now);
  if (!written.ok) throw written.reason === "name-taken" ? new QuireError("261") : invalid("folderId");
  return folderView(written.folder);
};
