import { hash, timingSafeEqual } from "node:crypto";

/**
 * decisions §3: MD5 over the secret, then every parameter but `signature` and `file`,
 * sorted by name in byte order, each as name followed by its decoded value.
 */
export function computeSignature(secret: string, params: Iterable<readonly [string, string]>): string {
  const entries: Array<readonly [string, string]> = [];
  for (const entry of params) if (entry[0] !== "signature" && entry[0] !== "file") entries.push(entry);
  entries.sort(([a], [b]) => compareAsUtf8(a, b));
  // The whole text hashed in one call: this runs on every request, and a Hash object (or each
  // update of one) costs more than the hashing of a few hundred bytes.
  let text = secret;
  for (const [name, value] of entries) text += name + value;
  return hash("md5", text, "hex");
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Byte order of the UTF-8 forms, which is code point order. JavaScript compares UTF-16 code
 * units, which is the same order unless a surrogate (a character beyond U+FFFF) is compared.
 */
function compareAsUtf8(a: string, b: string): number {
  if (SURROGATE.test(a) || SURROGATE.test(b)) return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Constant-time and case-insensitive, as decisions §3 requires. */
export function signatureMatches(expectedHex: string, given: string): boolean {
  const a = Buffer.from(expectedHex.toLowerCase(), "utf8");
  const b = Buffer.from(given.toLowerCase(), "utf8");
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}
