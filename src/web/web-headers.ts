import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { FastifyReply, FastifyRequest } from "fastify";
import { plainHttpOrigin } from "./public-origin.ts";

/** One year: assets and images carry a content hash or version in their address. */
export const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * The strict policy of every public page: nothing inline, nothing from another host. Only the
 * embed page may be framed, by anyone; an audio file is the one thing fetched from the address
 * its owner gave.
 */
export function contentSecurityPolicy(opts: { frameable: boolean; mediaOrigin?: string | undefined }): string {
  // Only ever a plain origin: anything else could carry its own directives into the policy.
  const media = opts.mediaOrigin !== undefined && plainHttpOrigin(opts.mediaOrigin) === opts.mediaOrigin ? opts.mediaOrigin : "'none'";
  return [
    "default-src 'none'",
    "img-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    `media-src ${media}`,
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${opts.frameable ? "*" : "'none'"}`,
  ].join("; ");
}

export function setPageHeaders(reply: FastifyReply, opts: { frameable: boolean; mediaOrigin?: string | undefined; noindex?: boolean }): void {
  reply.header("content-security-policy", contentSecurityPolicy(opts));
  if (!opts.frameable) reply.header("x-frame-options", "DENY");
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "strict-origin-when-cross-origin");
  if (opts.noindex) reply.header("x-robots-tag", "noindex, nofollow");
}

/** Below this a compressed body saves less than its headers cost. */
const COMPRESS_FROM = 1024;

/**
 * Sends a generated body with a strong ETag, answering 304 when the client already has it. Text
 * is gzipped for clients that take it (a 100-page reader is about 200 KB of HTML, mostly page
 * text); the gzipped representation has its own tag, as a strong ETag must.
 */
export function sendWithEtag(req: FastifyRequest, reply: FastifyReply, body: string | Buffer, contentType: string, cacheControl: string) {
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 27);
  const gzip = Buffer.byteLength(body) >= COMPRESS_FROM && !contentType.startsWith("image/") && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
  const etag = gzip ? `"${hash}-gz"` : `"${hash}"`;
  reply.header("etag", etag).header("cache-control", cacheControl).header("vary", "accept-encoding");
  if (etagMatches(req.headers["if-none-match"], etag)) return reply.code(304).send();
  reply.type(contentType);
  if (!gzip) return reply.send(body);
  return reply.header("content-encoding", "gzip").send(gzipSync(body, { level: 6 }));
}

export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}
