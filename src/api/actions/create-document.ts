import { blobKeys } from "../../blobs/blob-keys.ts";
import { buildNewDocument, newBlobId, newDocumentIds, type NewDocumentSource } from "../../domain/document.ts";
import { readDocumentOptions } from "../../domain/document-options.ts";
import { invalid } from "../../domain/errors.ts";
import { CONVERT_DOCUMENT } from "../../domain/job-kinds.ts";
import { isUniqueViolation } from "../../store/documents.ts";
import { documentView } from "../document-view.ts";
import { checkOutputParams } from "../output-format.ts";
import type { Resource } from "../payload.ts";
import type { ActionContext } from "./action.ts";

/**
 * What both upload operations share once their own first parameter is checked: the optional
 * parameters in table order, then the original into the blob store, then record and job in one
 * transaction. A failure after the blob is written removes it again, so nothing is left behind.
 */
export async function createDocument(
  ctx: ActionContext,
  source: Omit<NewDocumentSource, "accountId" | "username" | "blobId">,
  spooledPath: string | undefined,
): Promise<Resource> {
  const { caller, deps, params, now } = ctx;
  const options = await readDocumentOptions(params.get, {
    isNameTaken: (name) => deps.store.documents.isNameTaken(caller.accountId, name),
    ownsAllFolders: (ids) => deps.store.folders.ownsAll(caller.accountId, ids),
  });
  checkOutputParams(params);

  const blobId = newBlobId();
  const record = buildNewDocument(
    newDocumentIds(now),
    { ...source, accountId: caller.accountId, username: caller.username, blobId },
    options,
    now,
  );
  const originalKey = blobKeys.original(blobId);
  if (spooledPath !== undefined) await deps.blobs.putFile(originalKey, spooledPath);
  try {
    await deps.store.documents.insertWithJob(record, CONVERT_DOCUMENT, ctx.requestId);
  } catch (err) {
    if (spooledPath !== undefined) await deps.blobs.delete(originalKey);
    // Two uploads raced for the same name: the loser's name is taken, as the check above would have said.
    if (isUniqueViolation(err) && options.name !== undefined) throw invalid("name");
    throw err;
  }
  return documentView(record);
}
