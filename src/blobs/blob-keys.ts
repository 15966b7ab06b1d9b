/**
 * The one place that derives blob keys. Keys start with the document's random `blobId`, which
 * is never answered by the API, so no public name or id leads to a file.
 */
export const blobKeys = {
  prefix: (blobId: string) => `documents/${blobId}/`,
  original: (blobId: string) => `documents/${blobId}/original`,
  pdf: (blobId: string) => `documents/${blobId}/document.pdf`,
  page: (blobId: string, page: number, size: string, ext: string) => `documents/${blobId}/pages/${size}/${page}.${ext}`,
  cover: (blobId: string, size: "small" | "medium" | "large", ext: string) => `documents/${blobId}/cover-${size}.${ext}`,
  text: (blobId: string) => `documents/${blobId}/text.json`,
};

const KEY_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.\-/]*$/;

/** Refuses anything a backend could misread as a path outside its root. */
export function assertValidKey(key: string): void {
  if (!KEY_RE.test(key) || key.split("/").some((part) => part === "" || part === "." || part === "..")) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  }
}
