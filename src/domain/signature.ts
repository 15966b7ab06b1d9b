import { hash } from "node:crypto";

/**
 * decisions §3: MD5 over the secret, then every parameter but `signature` and `file`,
 * sorted by name in byte order, each as name followed by its decoded value.
 */
export function computeSignature(secret: string, params: Iterable<readonly [string, string]>): string {
  const entries: Array<readonly [string, string]> = [];
  let surrogates = false;
  for (const entry of params) {
    if (entry[0] === "signature" || entry[0] === "file") continue;
    entries.push(entry);
    surrogates ||= SURROGATE.test(entry[0]);
  }
  entries.sort(surrogates ? ([a], [b]) => compareAsUtf8(a, b) : ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // The whole text hashed in one call: this runs on every request, and a Hash object (or each
  // update of one) costs more than the hashing of a few hundred bytes.
  let text = secret;
  for (const [name, value] of entries) text += name + value;
  return hash("md5", text, "hex");
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Byte order of the UTF-8 forms, which is code point order. JavaScript compares UTF-16 code
 * units, which is the same order unless a surrogate (a character beyond U+FFFF) is compared;
 * names without one (nearly all) are sorted as they are.
 */
function compareAsUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * Constant-time and case-insensitive, as decisions §3 requires: every character is compared,
 * whatever the first difference, and only the length (always 32 for a real signature) shows.
 * A loop over code units rather than crypto.timingSafeEqual, which needs two Buffers made per
 * request.
 */
export function signatureMatches(expectedHex: string, given: string): boolean {
  if (expectedHex.length !== given.length) return false;
  let differences = 0;
  for (let i = 0; i < given.length; i++) differences |= asciiLower(expectedHex.charCodeAt(i)) ^ asciiLower(given.charCodeAt(i));
  return differences === 0;
}

/** A-Z to a-z without a branch on the value; anything else as it is. */
function asciiLower(c: number): number {
  return c | (((c - 0x41) >>> 31 ^ 1) & ((0x5a - c) >>> 31 ^ 1)) << 5;
}
