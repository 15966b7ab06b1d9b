import { updateDocument } from "../../domain/document-operations.ts";
import { replaceRoute, type Replacement } from "../../domain/document-replacement.ts";
import { readDocumentUpdate } from "../../domain/document-update.ts";
import type { ParamGetter } from "../../domain/document-options.ts";
import { QuireError } from "../../domain/errors.ts";
import { replaceDocumentFile } from "../../uploads/replace-file.ts";
import { fileSource } from "../../uploads/upload-sources.ts";
import { documentView } from "../document-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { Resource } from "../payload.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document.update` (decisions §8): every parameter checked in table order first
 * (readDocumentUpdate); then the document, its new name and the write, by the operation the web
 * app uses too (src/domain/document-operations.ts, which says the rules).
 *
 * Sent to the upload endpoint with a `file` part, it also replaces the document's file, keeping its
 * address (docs/api.md, src/domain/document-replacement.ts): the file is checked (201 on `file`)
 * and the document's state (307 while it converts for the first time) before anything is written.
 */
export const documentUpdate: ActionHandler = async ({ params, caller, deps, now, upload, requestId }) => {
  const { name, changes } = readDocumentUpdate(params.get);
  checkOutputParams(params);
  if (upload === undefined) return documentView(await updateDocument(deps.store.documents, caller.accountId, name, changes, now));
  const doc = await deps.store.documents.getByNameOrId(caller.accountId, name);
  if (!doc) throw new QuireError("300");
  const source = await fileSource(upload);
  if (replaceRoute(doc) === "converting") throw new QuireError("307");
  const updated = await updateDocument(deps.store.documents, caller.accountId, doc.documentId, changes, now);
  const replaced = await replaceDocumentFile(deps, { doc: updated, source, spooledPath: upload.path, now, requestId });
  if (!replaced.ok) throw new QuireError(replaced.reason === "not-found" ? "300" : "307");
  const after = await deps.store.documents.getById(caller.accountId, doc.documentId);
  if (!after) throw new QuireError("300");
  return withReplacement(documentView(after), replaced.route === "beside" ? replaced.replacement : undefined);
};

/**
 * A document's answer with its new file's progress, while one converts beside its pages or after it
 * failed: `replacementState` (`P` or `F`), `replacementErrorCode`, `replacementErrorMessage` (the
 * codes of decisions §6). Absent otherwise, so every other answer stays the interface document's.
 */
export function withReplacement(view: Resource, r: Replacement | undefined): Resource {
  if (r === undefined) return view;
  return { ...view, fields: [...view.fields, ["replacementState", r.state], ["replacementErrorCode", r.errorCode], ["replacementErrorMessage", r.errorMessage]] };
}

/** At the size limit: a malformed parameter sent before the file wins over 205 (decisions §2), as for uploads. */
export async function refusalAtUpdateLimit(get: ParamGetter): Promise<QuireError> {
  try {
    readDocumentUpdate(get);
  } catch (err) {
    if (err instanceof QuireError) return err;
    throw err;
  }
  return new QuireError("205", "file");
}
