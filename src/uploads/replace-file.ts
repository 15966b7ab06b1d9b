import { blobKeys } from "../blobs/blob-keys.ts";
import { newBlobId, type DocumentRecord } from "../domain/document.ts";
import { replaceRoute, type Replacement } from "../domain/document-replacement.ts";
import { assertRoomForUploads } from "./disk-guard.ts";
import type { UploadDeps } from "./new-document.ts";
import type { UploadSource } from "./upload-sources.ts";

export interface FileReplacement {
  /** The caller's own document, as read before the file was spooled. */
  doc: DocumentRecord;
  source: UploadSource;
  /** The spooled file (taken over by the blob store); undefined for an address the worker fetches. */
  spooledPath: string | undefined;
  now: number;
  requestId?: string;
}

/**
 * How a replacement ended: converting beside the published pages, converting again in place of a
 * failed document's (or v2 draft's) file, or refused: the document is converting for the first
 * time, or gone (deleted meanwhile, or not the caller's).
 */
export type ReplaceOutcome =
  | { ok: true; route: "beside"; replacement: Replacement }
  | { ok: true; route: "restart" }
  | { ok: false; reason: "converting" | "not-found" };

/**
 * A document's new file, keeping its address (src/domain/document-replacement.ts): the file goes
 * into a blob folder of its own, then the record's change and its conversion job are written in one
 * transaction. Whatever is refused or fails leaves nothing behind; files nothing points at any more
 * (a superseded replacement's, a failed document's previous original) are removed, and the orphan
 * clean-up takes them should that be cut short. Shared by v1, v2 and the app.
 */
export async function replaceDocumentFile(deps: UploadDeps, r: FileReplacement): Promise<ReplaceOutcome> {
  const route = replaceRoute(r.doc);
  if (route === "converting") return { ok: false, reason: "converting" };
  if (r.spooledPath === undefined) await assertRoomForUploads(deps.diskSpace);
  const blobId = newBlobId();
  const key = blobKeys.original(blobId);
  if (r.spooledPath !== undefined) await deps.blobs.putFile(key, r.spooledPath);
  const source = {
    origin: r.source.origin, orgDocType: r.source.orgDocType, orgDocName: r.source.orgDocName,
    slurpUrl: r.source.slurpUrl, originalSize: r.source.originalSize, blobId,
  };
  let outcome: ReplaceOutcome;
  let unused: string | undefined;
  try {
    if (route === "beside") {
      const started = await deps.store.replacements.start(r.doc.accountId, r.doc.documentId, source, r.now, r.requestId);
      if (started.ok) {
        outcome = { ok: true, route, replacement: started.replacement };
        unused = started.supersededBlobId;
      } else {
        outcome = { ok: false, reason: started.reason === "not-found" ? "not-found" : "converting" };
      }
    } else {
      const restarted = await deps.store.documents.restartWithOriginal(r.doc.accountId, r.doc.documentId, source, r.now, r.requestId);
      outcome = restarted ? { ok: true, route } : { ok: false, reason: (await deps.store.documents.getById(r.doc.accountId, r.doc.documentId)) ? "converting" : "not-found" };
      unused = restarted?.previousBlobId;
    }
  } catch (err) {
    if (r.spooledPath !== undefined) await deps.blobs.delete(key);
    throw err;
  }
  if (!outcome.ok) {
    if (r.spooledPath !== undefined) await deps.blobs.delete(key);
    return outcome;
  }
  // A running job of a superseded replacement discards what it makes there too, when it ends.
  if (unused !== undefined) await deps.blobs.deletePrefix(blobKeys.prefix(unused)).catch(() => undefined);
  return outcome;
}
