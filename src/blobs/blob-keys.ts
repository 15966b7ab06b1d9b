/**
 * The one place that derives blob keys. Keys start with the document's random `blobId`, which
 * is never answered by the API, so no public name or id leads to a file.
 */
export const blobKeys = {
  /** Where every document's folder lies (the orphan clean-up lists it whole). */
  root: "documents/",
  prefix: (blobId: string) => `documents/${blobId}/`,
  original: (blobId: string) => `documents/${blobId}/original`,
  pdf: (blobId: string) => `documents/${blobId}/document.pdf`,
  page: (blobId: string, page: number, size: string, ext: string) => `documents/${blobId}/pages/${size}/${page}.${ext}`,
  /** A page made from its master (`page(…, "read" | "thumb", "jpg")`) at another width or format: src/page-variants.ts. */
  pageVariant: (blobId: string, page: number, width: number, ext: string) => `documents/${blobId}/pages/w${width}/${page}.${ext}`,
  cover: (blobId: string, size: "small" | "medium" | "large", ext: string) => `documents/${blobId}/cover-${size}.${ext}`,
  text: (blobId: string) => `documents/${blobId}/text.json`,
  /** One page range's text of a split document, until the ranges are put together into `text`. */
  rangeText: (blobId: string, firstPage: number) => `documents/${blobId}/ranges/${firstPage}.json`,
};

const DOCUMENT_KEY = /^documents\/([^/]+)\//;

/** The `blobId` of the document folder a key lies in; undefined for a key outside every document's folder. */
export function blobIdOf(key: string): string | undefined {
  return DOCUMENT_KEY.exec(key)?.[1];
}

const KEY_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.\-/]*$/;

/** Refuses a prefix that is empty (every key) or not a whole folder (`documents/ab` would take `documents/abc/`). */
export function assertValidPrefix(prefix: string): void {
  if (!prefix.endsWith("/")) throw new Error(`invalid blob prefix: ${JSON.stringify(prefix)}`);
  assertValidKey(prefix.slice(0, -1));
}

/** Refuses anything a backend could misread as a path outside its root. */
export function assertValidKey(key: string): void {
  if (!KEY_RE.test(key) || key.split("/").some((part) => part === "" || part === "." || part === "..")) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  }
}

