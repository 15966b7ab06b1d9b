import { updateDocument } from "../../domain/document-operations.ts";
import { readDocumentUpdate } from "../../domain/document-update.ts";
import { documentView } from "../document-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document.update` (decisions §8): every parameter checked in table order first
 * (readDocumentUpdate); then the document, its new name and the write, by the operation the web
 * app uses too (src/domain/document-operations.ts, which says the rules).
 */
export const documentUpdate: ActionHandler = async ({ params, caller, deps, now }) => {
  const { name, changes } = readDocumentUpdate(params.get);
  checkOutputParams(params);
  return documentView(await updateDocument(deps.store.documents, caller.accountId, name, changes, now));
};
