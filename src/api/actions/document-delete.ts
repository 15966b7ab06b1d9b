import { blobKeys } from "../../blobs/blob-keys.ts";
import { missing } from "../../domain/errors.ts";
import { parseList } from "../../domain/values.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document.delete` (decisions §8): the caller's documents of these names go with their jobs,
 * bookmarks, embeds (cascade) and every blob under their private prefix. Other names are passed
 * over, so deleting is idempotent. A conversion still running finds its record gone and removes
 * what it wrote after this (src/jobs/convert-document.ts).
 */
export const documentDelete: ActionHandler = async ({ params, caller, deps, log }) => {
  const value = params.get("names");
  const names = value === undefined ? [] : parseList(value);
  if (names.length === 0) throw missing("names");
  checkOutputParams(params);

  const removed = await deps.store.documents.deleteByNames(caller.accountId, names);
  for (const { documentId, blobId } of removed) {
    try {
      for (const key of await deps.blobs.list(blobKeys.prefix(blobId))) await deps.blobs.delete(key);
    } catch (err) {
      // The record is gone already; its files are unreachable and left to the orphan clean-up.
      log.error({ err, documentId }, "removing a deleted document's files failed");
    }
  }
  return undefined;
};
