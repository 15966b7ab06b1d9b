import { hash, timingSafeEqual } from "node:crypto";

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

const HEX_32 = /^[0-9a-fA-F]{32}$/;
/**
 * Scratch space for the comparison: the request path is synchronous here, and filling two
 * Buffers made once costs less than making two per request (the reason a hand-written loop was
 * once used instead of crypto.timingSafeEqual).
 */
const expectedBytes = Buffer.alloc(32);
const givenBytes = Buffer.alloc(32);

/**
 * Constant-time and case-insensitive, as decisions §3 requires: `crypto.timingSafeEqual` on the
 * two 32-byte hex spellings. Only the given value (the caller's own) is looked at before that:
 * anything but 32 hex digits answers false at once, and its letters are lowercased.
 */
export function signatureMatches(expectedHex: string, given: string): boolean {
  if (expectedHex.length !== 32 || !HEX_32.test(given)) return false;
  for (let i = 0; i < 32; i++) {
    expectedBytes[i] = expectedHex.charCodeAt(i);
    // Setting bit 0x20 lowercases A-F and leaves 0-9 as they are.
    givenBytes[i] = given.charCodeAt(i) | 0x20;
  }
  return timingSafeEqual(expectedBytes, givenBytes);
}
