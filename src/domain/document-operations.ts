import type { DocumentRecord } from "./document.ts";
import type { DocumentChanges } from "./document-update.ts";
import { invalid, QuireError } from "./errors.ts";

/**
 * `svc.document.update` and `svc.document.delete` as operations, called by the API's actions and
 * by the web app alike (one implementation of every rule). The domain does no I/O: callers pass
 * the store's documents repository (and for deletes, how a document's files are removed).
 */

/** The stored columns an update writes (booleans 0/1, tags as JSON), as the store takes them. */
export interface DocumentPatch {
  title?: string;
  tags?: string;
  description?: string;
  descriptionGiven?: number;
  language?: string;
  category?: string;
  type?: string;
  publishDate?: number;
  access?: string;
  commentsAllowed?: number;
  downloadable?: number;
  explicit?: number;
  infoLink?: string;
  ratingsAllowed?: number;
  soundUrl?: string;
  name?: string;
  nameGiven?: number;
  updatedAt: number;
}

export interface UpdatePort {
  getByNameOrId(accountId: number, nameOrId: string): Promise<DocumentRecord | undefined>;
  getById(accountId: number, documentId: string): Promise<DocumentRecord | undefined>;
  isNameTaken(accountId: number, name: string, exceptDocumentId?: string): Promise<boolean>;
  /** Not found when the document is gone; name taken when another request took the name between the check and the write. */
  update(accountId: number, documentId: string, patch: DocumentPatch): Promise<{ ok: true } | { ok: false; reason: "name-taken" | "not-found" }>;
}

/** A boolean column is 0/1 in the store. */
const flag = <K extends string>(column: K, value: boolean | undefined): Partial<Record<K, number>> =>
  value === undefined ? {} : ({ [column]: value ? 1 : 0 } as Record<K, number>);

/**
 * Applies checked changes (readDocumentUpdate) to the account's document named `name` (its name or
 * its documentId; none of the account's: 300, decisions §5); `newName` must be free (201). Omitted
 * fields stay as they are; `ep` moves on every update.
 *
 * `access=private` on a document whose name was made from its title gives it back its documentId
 * as name, so that making it private does not leave it at a guessable address (decisions §5: a
 * private document's address is its only protection). A name the caller chose stays, and a
 * document made public keeps its name: its address does not change under links already shared.
 */
export async function updateDocument(
  docs: UpdatePort,
  accountId: number,
  name: string,
  changes: DocumentChanges,
  now: number,
): Promise<DocumentRecord> {
  const doc = await docs.getByNameOrId(accountId, name);
  if (!doc) throw new QuireError("300");
  const { newName, tags, commentsAllowed, downloadable, explicit, ratingsAllowed, ...rest } = changes;
  if (newName !== undefined && newName !== doc.name && (await docs.isNameTaken(accountId, newName, doc.documentId))) throw invalid("newName");
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
  const updated = await docs.update(accountId, doc.documentId, patch);
  // Another request took the name between the check and the write.
  if (!updated.ok && updated.reason === "name-taken") {
    if (newName !== undefined) throw invalid("newName");
    throw new Error(`document ${doc.documentId} collided with another on a name it was not given`);
  }
  const after = updated.ok ? await docs.getById(accountId, doc.documentId) : undefined;
  if (!after) throw new QuireError("300"); // deleted meanwhile
  return after;
}

export interface DeletePort {
  deleteByNames(accountId: number, names: readonly string[], now: number): Promise<Array<{ documentId: string; blobId: string }>>;
}

/**
 * Deletes the account's documents of these names (or documentIds) with their jobs, bookmarks,
 * embeds, and then every file under their private prefix. Other names are passed over, so
 * deleting is idempotent. A file that cannot be removed is reported, not thrown: the record is gone
 * already, its files unreachable and left to the orphan clean-up. A conversion still running finds
 * its record gone and removes what it wrote after this (src/jobs/convert-document.ts).
 */
export async function deleteDocuments(
  docs: DeletePort,
  removeFiles: (blobId: string) => Promise<void>,
  onFileError: (err: unknown, documentId: string) => void,
  accountId: number,
  names: readonly string[],
  now: number,
): Promise<string[]> {
  const removed = await docs.deleteByNames(accountId, names, now);
  for (const { documentId, blobId } of removed) {
    try {
      await removeFiles(blobId);
    } catch (err) {
      onFileError(err, documentId);
    }
  }
  return removed.map((r) => r.documentId);
}
