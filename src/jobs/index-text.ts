import { text as readAll } from "node:stream/consumers";
import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import type { PageText } from "../convert/pdf-pages.ts";
import type { Store } from "../store/open-store.ts";
import type { JobHandler } from "./job-registry.ts";

export interface IndexTextDeps {
  store: Pick<Store, "documents">;
  blobs: Pick<BlobStore, "get" | "exists">;
}

/**
 * The `index-text` job (migration 0011): a document published before the search index existed
 * has its text only in its stored `text.json`; this puts the pages' texts into the index, as
 * publishing does now. Skipped when the document is no longer `A`, its text is indexed already, or
 * it has no stored text (a document with no text has nothing to find). Never fails the document:
 * it stays published whatever happens here, and is still found by its title, tags and description.
 */
export function indexTextHandler(deps: IndexTextDeps): JobHandler {
  return {
    async run({ job, signal }) {
      const doc = await deps.store.documents.getForConversion(job.documentId);
      if (doc?.state !== "A" || (await deps.store.documents.hasIndexedText(doc.documentId))) return "skipped";
      const key = blobKeys.text(doc.blobId);
      if (!(await deps.blobs.exists(key))) return "skipped";
      const pages = JSON.parse(await readAll(await deps.blobs.get(key))) as PageText[];
      signal.throwIfAborted();
      const pageTexts = Array.from({ length: doc.pageCount }, () => "");
      for (const p of pages) if (Number.isInteger(p.page) && p.page >= 1 && p.page <= doc.pageCount) pageTexts[p.page - 1] = String(p.text ?? "");
      return (await deps.store.documents.indexStoredText(doc.documentId, pageTexts)) ? "success" : "skipped";
    },

    async giveUp() {
      // The document stays as it is: published, found by its title, tags and description.
    },
  };
}
