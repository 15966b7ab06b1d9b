import { blobKeys } from "../../blobs/blob-keys.ts";
import type { DocumentRecord } from "../../domain/document.ts";
import { deleteDocuments } from "../../domain/document-operations.ts";
import type { V2Context } from "./v2-operation.ts";

/** Deletes by the one operation v1 and the app use (its webhook, its files). */
export async function deleteOwnDocument(ctx: V2Context, doc: DocumentRecord): Promise<void> {
  await deleteDocuments(
    ctx.deps.store.documents,
    (blobId) => ctx.deps.blobs.deletePrefix(blobKeys.prefix(blobId)).then(() => undefined),
    (err, documentId) => ctx.log.warn({ err, documentId }, "could not remove a deleted document's files"),
    ctx.caller.accountId,
    [doc.documentId],
    ctx.now,
  );
}
