import { createDocument as createNewDocument, readUploadOptions } from "../../uploads/new-document.ts";
import type { UploadSource } from "../../uploads/upload-sources.ts";
import { documentView } from "../document-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { Resource } from "../payload.ts";
import type { ActionContext } from "./action.ts";

/**
 * What both upload operations share once their own first parameter is checked: the optional
 * parameters in table order, the output parameters, then the document itself (src/uploads/,
 * shared with the web app's upload page), answered as its record.
 */
export async function createDocument(ctx: ActionContext, source: UploadSource, spooledPath: string | undefined): Promise<Resource> {
  const { caller, deps, params, now } = ctx;
  const options = await readUploadOptions(params.get, deps.store, caller.accountId);
  checkOutputParams(params);
  const record = await createNewDocument(deps, { uploader: caller, source, options, spooledPath, now, requestId: ctx.requestId });
  return documentView(record);
}
