import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import type { DiskSpace } from "../blobs/disk-space.ts";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions, type DocumentRecord } from "../domain/document.ts";
import { readDocumentOptions, type ParamGetter } from "../domain/document-options.ts";
import { invalid, QuireError } from "../domain/errors.ts";
import { CONVERT_DOCUMENT } from "../domain/job-kinds.ts";
import type { Store } from "../store/open-store.ts";
import { assertRoomForUploads } from "./disk-guard.ts";
import type { UploadSource } from "./upload-sources.ts";

/** What creating a document needs: the store and the blob store. */
export interface UploadDeps {
  store: Store;
  blobs: BlobStore;
  /** While it is short of space, new documents are refused with 012 (unset: never). */
  diskSpace?: Pick<DiskSpace, "shortage">;
}

/** The account a new document belongs to. */
export interface Uploader {
  accountId: number;
  username: string;
}

/**
 * The optional parameters of an upload (interface §4.2 table order), with the checks that need
 * the store: a taken name, folders that are not the uploader's. The API and the web app read
 * their upload forms through this one function.
 */
export function readUploadOptions(get: ParamGetter, store: Store, accountId: number): Promise<DocumentOptions> {
  return readDocumentOptions(get, {
    isNameTaken: (name) => store.documents.isNameTaken(accountId, name),
    ownsAllFolders: (ids) => store.folders.ownsAll(accountId, ids),
  });
}

/**
 * What to answer once a file passes the size limit: a malformed option sent before it wins over
 * 205 (decisions §2), as it would had the file been small.
 */
export async function refusalAtLimit(get: ParamGetter, store: Store, accountId: number): Promise<QuireError> {
  try {
    await readUploadOptions(get, store, accountId);
  } catch (err) {
    if (err instanceof QuireError) return err;
    throw err;
  }
  return new QuireError("205", "file");
}

export interface NewDocument {
  uploader: Uploader;
  source: UploadSource;
  options: DocumentOptions;
  /** The spooled file of a file upload (taken over by the blob store); undefined for URL uploads. */
  spooledPath: string | undefined;
  now: number;
  /** The request that enqueued the conversion, kept with its job. */
  requestId?: string;
  /** A v2 draft (decisions §14): converted, then left unpublished until its publish. */
  draft?: boolean;
}

/**
 * The original into the blob store, then record (state P) and conversion job in one transaction.
 * A failure after the blob is written removes it again, so nothing is left behind. Shared by
 * both upload operations of the API and the web app's upload page.
 */
export async function createDocument(deps: UploadDeps, doc: NewDocument): Promise<DocumentRecord> {
  // A URL upload's original is fetched onto this disk by the worker: refused like a file while it is full.
  if (doc.spooledPath === undefined) await assertRoomForUploads(deps.diskSpace);
  const blobId = newBlobId();
  const record = buildNewDocument(
    newDocumentIds(doc.now),
    { ...doc.source, accountId: doc.uploader.accountId, username: doc.uploader.username, blobId },
    doc.options,
    doc.now,
  );
  if (doc.draft === true) record.draft = true;
  const originalKey = blobKeys.original(blobId);
  if (doc.spooledPath !== undefined) await deps.blobs.putFile(originalKey, doc.spooledPath);
  let inserted;
  try {
    inserted = await deps.store.documents.insertWithJob(record, CONVERT_DOCUMENT, doc.requestId);
  } catch (err) {
    if (doc.spooledPath !== undefined) await deps.blobs.delete(originalKey);
    throw err;
  }
  if (!inserted.ok) {
    if (doc.spooledPath !== undefined) await deps.blobs.delete(originalKey);
    // Two uploads raced for the same name: the loser's name is taken, as the check would have said.
    if (doc.options.name !== undefined) throw invalid("name");
    throw new Error(`document ${record.documentId} collided with another on a name it was not given`);
  }
  return record;
}
