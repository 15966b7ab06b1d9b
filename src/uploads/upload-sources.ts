import { detectFormat } from "../detect/detect-format.ts";
import { docTypeFromUrl, titleFromFileName, titleFromUrl, type NewDocumentSource } from "../domain/document.ts";
import { invalid } from "../domain/errors.ts";
import { docTypeFromExtension } from "../domain/formats.ts";
import { parseHttpUrl } from "../domain/values.ts";
import type { SpooledFile } from "./upload-reader.ts";

/** Where a new document comes from, as its record tells it. */
export type UploadSource = Omit<NewDocumentSource, "accountId" | "username" | "blobId">;

/**
 * A spooled file as a document's source (interface §4.2): its format comes from its content,
 * never its name; anything not a supported format is 201 on `file`.
 */
export async function fileSource(file: SpooledFile): Promise<UploadSource> {
  const orgDocType = await detectFormat(file.path, { fileName: file.fileName });
  if (orgDocType === null) throw invalid("file");
  return {
    origin: "apiupload",
    orgDocType,
    orgDocName: file.fileName,
    defaultTitle: titleFromFileName(file.fileName),
    slurpUrl: "",
    originalSize: file.size,
  };
}

/** A web address as a document's source (interface §4.3): checked here, fetched by the worker. */
export function urlSource(slurpUrl: string): UploadSource {
  const url = parseHttpUrl("slurpUrl", slurpUrl);
  return {
    origin: "apislurp",
    orgDocType: docTypeFromUrl(url, docTypeFromExtension),
    orgDocName: slurpUrl,
    defaultTitle: titleFromUrl(url),
    slurpUrl,
    originalSize: 0,
  };
}
