/** The direction of a listing, as the API's `order` parameter names it. */
export type SortOrder = "asc" | "desc";

/** Byte order of UTF-8 (code point order), the same in both dialects, unlike a database collation. */
export function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
