import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions, type DocumentRecord } from "../../src/domain/document.ts";
import type { Store } from "../../src/store/open-store.ts";

/** Documents put straight into the store (with their page texts, for search), for store and search tests where the pipeline is not the point. */

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

let seq = 0;

export function newStoreDoc(accountId: number, username: string, fields: Partial<DocumentRecord>): DocumentRecord {
  const now = Date.now();
  const ids = newDocumentIds(now);
  ids.publicationId = (seq++).toString(16).padStart(8, "0") + ids.publicationId.slice(8);
  ids.documentId = `${ids.revisionId}-${ids.publicationId}`;
  const d = buildNewDocument(
    ids,
    { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "untitled", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    OPTIONS,
    now,
  );
  return { ...d, descriptionGiven: fields.description !== undefined, ...fields };
}

/** Inserts a document and publishes it with these page texts, as the conversion job does. */
export async function publishWithText(store: Store, doc: DocumentRecord, pages: readonly string[]): Promise<DocumentRecord> {
  await store.documents.insertWithJob({ ...doc, state: "P" }, "convert-document");
  await store.documents.markActive(
    doc.documentId,
    { pageCount: pages.length, coverWidth: 100, coverHeight: 141, description: undefined, name: undefined, pageTexts: pages },
    Date.now(),
  );
  return (await store.documents.getById(doc.accountId, doc.documentId))!;
}

/** Filler text for pages that should match nothing in particular. */
export function fillerPage(n: number): string {
  return `Page ${n} of the report discusses quarterly figures, budgets and the weather in general terms.`;
}
