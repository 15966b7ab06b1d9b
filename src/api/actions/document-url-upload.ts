import { docTypeFromUrl, titleFromUrl } from "../../domain/document.ts";
import { missing } from "../../domain/errors.ts";
import { docTypeFromExtension } from "../../domain/formats.ts";
import { parseHttpUrl } from "../../domain/values.ts";
import type { ActionHandler } from "./action.ts";
import { createDocument } from "./create-document.ts";

/** `svc.document.url_upload` (interface §4.3): the address is checked here, fetched by the worker. */
export const documentUrlUpload: ActionHandler = async (ctx) => {
  const slurpUrl = ctx.params.get("slurpUrl");
  if (slurpUrl === undefined) throw missing("slurpUrl");
  const url = parseHttpUrl("slurpUrl", slurpUrl);
  return createDocument(
    ctx,
    {
      origin: "apislurp",
      orgDocType: docTypeFromUrl(url, docTypeFromExtension),
      orgDocName: slurpUrl,
      defaultTitle: titleFromUrl(url),
      slurpUrl,
      originalSize: 0,
    },
    undefined,
  );
};
