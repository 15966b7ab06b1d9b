import { blobKeys } from "../../blobs/blob-keys.ts";
import { deleteDocuments } from "../../domain/document-operations.ts";
import { missing } from "../../domain/errors.ts";
import { parseList } from "../../domain/values.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document.delete` (decisions §8): the caller's documents of these names go with everything
 * of theirs, by the operation the web app uses too (src/domain/document-operations.ts). Other
 * names are passed over, so deleting is idempotent.
 */
export const documentDelete: ActionHandler = async ({ params, caller, deps, log, now }) => {
  const value = params.get("names");
  const names = value === undefined ? [] : parseList(value);
  if (names.length === 0) throw missing("names");
  checkOutputParams(params);
  await deleteDocuments(
    deps.store.documents,
    async (blobId) => void (await deps.blobs.deletePrefix(blobKeys.prefix(blobId))),
    (err, documentId) => log.error({ err, documentId }, "removing a deleted document's files failed"),
    caller.accountId,
    names,
    now,
  );
  return undefined;
};
