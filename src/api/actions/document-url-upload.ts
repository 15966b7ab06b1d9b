import { missing } from "../../domain/errors.ts";
import { urlSource } from "../../uploads/upload-sources.ts";
import type { ActionHandler } from "./action.ts";
import { createDocument } from "./create-document.ts";

/** `svc.document.url_upload` (interface §4.3): the address is checked here, fetched by the worker. */
export const documentUrlUpload: ActionHandler = async (ctx) => {
  const slurpUrl = ctx.params.get("slurpUrl");
  if (slurpUrl === undefined) throw missing("slurpUrl");
  return createDocument(ctx, urlSource(slurpUrl), undefined);
};
