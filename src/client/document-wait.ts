import type { QuireClient } from "./quire-client.ts";

/** What a waiting client knows of a document: the fields of its record it needs. */
export interface WaitedDocument {
  documentId: string;
  username: string;
  name: string;
  state: "P" | "A" | "F";
  errorCode: number;
  errorMessage: string;
  pageCount: number;
}

export interface WaitOptions {
  /** Time between two looks at the record: `first`, doubled after each look up to `max`. */
  pollMs: { first: number; max: number };
  /** Called after each look while the document is still being converted. */
  onPending?: (doc: WaitedDocument) => void;
  signal?: AbortSignal;
}

const LIST_PAGE = 100;

/**
 * Finds one document of the caller through `svc.documents.list`, the one operation that answers
 * records: the list is narrowed to the upload's `orgDocName` (its file name or address), newest
 * first, and paged until the id is seen. Undefined when it is gone (deleted meanwhile).
 */
export async function findDocument(client: QuireClient, documentId: string, orgDocName: string): Promise<WaitedDocument | undefined> {
  for (let startIndex = 0; ; startIndex += LIST_PAGE) {
    const content = await client.ok("documents.list", {
      orgDocName, documentSortBy: "documentId", resultOrder: "desc", pageSize: String(LIST_PAGE), startIndex: String(startIndex),
    });
    const result = content.result as { more: boolean; _content: Array<{ document: WaitedDocument }> };
    const found = result._content.find((item) => item.document.documentId === documentId);
    if (found) return found.document;
    if (!result.more) return undefined;
  }
}

/** Looks at the document until its conversion ends; answers it in state A or F. */
export async function waitForConversion(client: QuireClient, documentId: string, orgDocName: string, opts: WaitOptions): Promise<WaitedDocument> {
  for (let delay = opts.pollMs.first; ; delay = Math.min(delay * 2, opts.pollMs.max)) {
    opts.signal?.throwIfAborted();
    const doc = await findDocument(client, documentId, orgDocName);
    if (doc === undefined) throw new Error("The document was deleted before its conversion ended.");
    if (doc.state !== "P") return doc;
    opts.onPending?.(doc);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

