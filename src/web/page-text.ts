import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import type { PageText } from "../convert/pdf-text.ts";
import { SizeBoundedLru } from "../size-bounded-lru.ts";

/**
 * Text kept parsed in memory, in bytes of JSON: a reader's page, its text.json and its searches come
 * together. A 2000-page document's text can reach tens of megabytes, so the bound is on size.
 */
const CACHE_BYTES = 64 * 1024 * 1024;

/** The pipeline's text.json of a document, read through an LRU (the text never changes once written). */
export function pageTextReader(blobs: BlobStore) {
  const cache = new SizeBoundedLru<string, { raw: Buffer; pages: PageText[] }>(
    { maxTotal: CACHE_BYTES, maxEntry: CACHE_BYTES / 4 }, // one huge document must not push out all others
    (_blobId, entry) => entry.raw.length,
  );
  return async (blobId: string): Promise<{ raw: Buffer; pages: PageText[] }> => {
    const hit = cache.get(blobId);
    if (hit) return hit;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of await blobs.get(blobKeys.text(blobId))) chunks.push(chunk as Buffer);
    } catch {
      return { raw: Buffer.from("[]"), pages: [] }; // converted before text existed: pages without text
    }
    const raw = Buffer.concat(chunks);
    const entry = { raw, pages: JSON.parse(raw.toString("utf8")) as PageText[] };
    cache.set(blobId, entry);
    return entry;
  };
}

export type PageTextReader = ReturnType<typeof pageTextReader>;

/** Lowercased, accents folded: "Été" finds "ete". The browser bundle folds the same way. */
export function foldForSearch(s: string): string {
  return s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

export interface SearchHit {
  page: number;
  snippet: string;
}

/** Pages holding every term of the query, each with a snippet around its first match. */
export function searchPages(pages: readonly PageText[], query: string, limit = 200): SearchHit[] {
  const terms = foldForSearch(query).split(/\s+/).filter(Boolean);
  if (terms.length === 0) return [];
  const hits: SearchHit[] = [];
  for (const p of pages) {
    const flat = p.text.replace(/\s+/g, " ");
    const folded = foldForSearch(flat);
    // Folding may change lengths (ligatures), so snippets are cut from the folded text's positions only roughly.
    if (!terms.every((t) => folded.includes(t))) continue;
    const at = folded.indexOf(terms[0]!);
    const start = Math.max(0, at - 60);
    const snippet = (start > 0 ? "…" : "") + flat.slice(start, at + 100).trim() + (at + 100 < flat.length ? "…" : "");
    hits.push({ page: p.page, snippet });
    if (hits.length >= limit) break;
  }
  return hits;
}
