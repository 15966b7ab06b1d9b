import { missing } from "../../domain/errors.ts";
import { fileSource } from "../../uploads/upload-sources.ts";
import type { ActionHandler } from "./action.ts";
import { createDocument } from "./create-document.ts";

/** `svc.document.upload` (interface §4.2): the file's format comes from its content, never its name. */
export const documentUpload: ActionHandler = async (ctx) => {
  const file = ctx.upload;
  if (file === undefined) throw missing("file");
  return createDocument(ctx, await fileSource(file), file.path);
};
