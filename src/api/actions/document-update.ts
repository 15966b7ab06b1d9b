import { readDocumentUpdate } from "../../domain/document-update.ts";
import { invalid, QuireError } from "../../domain/errors.ts";
import { isUniqueViolation, type DocumentPatch } from "../../store/documents.ts";
import { documentView } from "../document-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/** A boolean column is 0/1 in the store. */
const flag = <K extends string>(column: K, value: boolean | undefined): Partial<Record<K, number>> =>
  value === undefined ? {} : ({ [column]: value ? 1 : 0 } as Record<K, number>);

/**
 * `svc.document.update` (decisions §8): every parameter checked in table order first; then the
 * document by its current name or its documentId (none of the caller's: 300, decisions §5); then
 * `newName` must be free (201). Omitted fields stay as they are; `ep` moves on every update.
 *
 * `access=private` on a document whose name was made from its title gives it back its documentId
 * as name, so that making it private does not leave it at a guessable address (decisions §5: a
 * private document's address is its only protection). A name the caller chose stays, and a
 * document made public keeps its name: its address does not change under links already shared.
 */
export const documentUpdate: ActionHandler = async ({ params, caller, deps, now }) => {
  const { name, changes } = readDocumentUpdate(params.get);
  checkOutputParams(params);

  const docs = deps.store.documents;
  const doc = await docs.getByNameOrId(caller.accountId, name);
  if (!doc) throw new QuireError("300");
  const { newName, tags, commentsAllowed, downloadable, explicit, ratingsAllowed, ...rest } = changes;
  if (newName !== undefined && newName !== doc.name && (await docs.isNameTaken(caller.accountId, newName, doc.documentId))) throw invalid("newName");
  const unguessable = newName === undefined && changes.access === "private" && !doc.nameGiven && doc.name !== doc.documentId;

  const patch: DocumentPatch = {
    ...rest,
    ...(tags !== undefined ? { tags: JSON.stringify(tags) } : {}),
    ...flag("commentsAllowed", commentsAllowed),
    ...flag("downloadable", downloadable),
    ...flag("explicit", explicit),
    ...flag("ratingsAllowed", ratingsAllowed),
    // The caller's description is never replaced by the extracted summary; a name set here is the caller's.
    ...(rest.description !== undefined ? { descriptionGiven: 1 } : {}),
    ...(newName !== undefined ? { name: newName, nameGiven: 1 } : {}),
    ...(unguessable ? { name: doc.documentId } : {}),
    // ep is in whole seconds: it moves on every update even when the last change was this same second.
    updatedAt: Math.max(now, (Math.floor(doc.updatedAt / 1000) + 1) * 1000),
  };
  let updated: boolean;
  try {
    updated = await docs.update(caller.accountId, doc.documentId, patch);
  } catch (err) {
    // Another request took the name between the check and the write.
    if (isUniqueViolation(err) && newName !== undefined) throw invalid("newName");
    throw err;
  }
  const after = updated ? await docs.getById(caller.accountId, doc.documentId) : undefined;
  if (!after) throw new QuireError("300"); // deleted meanwhile
  return documentView(after);
};
