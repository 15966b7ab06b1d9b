import { createHash, randomBytes } from "node:crypto";

/** Marks Quire's v2 tokens, so a token pasted in the wrong place is recognisable. */
const TOKEN_MARK = "qv2_";

/** How many characters of a token a list shows (the mark and 8 random ones): enough to tell tokens apart. */
export const TOKEN_PREFIX_LENGTH = TOKEN_MARK.length + 8;

/** A v2 bearer token (decisions §14): 32 random bytes, URL-safe (43 characters after the mark). */
export function newBearerToken(): string {
  return TOKEN_MARK + randomBytes(32).toString("base64url");
}

/**
 * What is stored and looked up: the SHA-256 of the token, hex. The token has 256 random bits, so
 * no salt or slow hash is needed, and the lookup by hash tells an attacker nothing of the token.
 */
export function bearerTokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export function bearerTokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX_LENGTH);
}

/** Whether a header value could be a token at all (checked before any lookup; bounded length). */
export function looksLikeBearerToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{32,200}$/.test(token);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer +(\S+) *$/i.exec(header);
  return m?.[1];
}
