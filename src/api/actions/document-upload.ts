import { detectFormat } from "../../detect/detect-format.ts";
import { titleFromFileName } from "../../domain/document.ts";
import { invalid, missing } from "../../domain/errors.ts";
import type { ActionHandler } from "./action.ts";
import { createDocument } from "./create-document.ts";

/** `svc.document.upload` (interface §4.2): the file's format comes from its content, never its name. */
export const documentUpload: ActionHandler = async (ctx) => {
  const file = ctx.upload;
  if (file === undefined) throw missing("file");
  const orgDocType = await detectFormat(file.path, { fileName: file.fileName });
  if (orgDocType === null) throw invalid("file");
  return createDocument(
    ctx,
    {
      origin: "apiupload",
      orgDocType,
      orgDocName: file.fileName,
      defaultTitle: titleFromFileName(file.fileName),
      slurpUrl: "",
      originalSize: file.size,
    },
    file.path,
  );
};
