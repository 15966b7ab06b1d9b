import { createHash, timingSafeEqual } from "node:crypto";

/**
 * decisions §3: MD5 over the secret, then every parameter but `signature` and `file`,
 * sorted by name in byte order, each as name followed by its decoded value.
 */
export function computeSignature(secret: string, params: Iterable<readonly [string, string]>): string {
  const entries = [...params].filter(([name]) => name !== "signature" && name !== "file");
  entries.sort(([a], [b]) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
  const hash = createHash("md5").update(secret, "utf8");
  for (const [name, value] of entries) hash.update(name, "utf8").update(value, "utf8");
  return hash.digest("hex");
}

/** Constant-time and case-insensitive, as decisions §3 requires. */
export function signatureMatches(expectedHex: string, given: string): boolean {
  const a = Buffer.from(expectedHex.toLowerCase(), "utf8");
  const b = Buffer.from(given.toLowerCase(), "utf8");
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}
