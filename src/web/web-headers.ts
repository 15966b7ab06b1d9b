import type { FastifyReply, FastifyRequest } from "fastify";
import { Answer, sendAnswer } from "./page-answers.ts";
import { plainHttpOrigin } from "./public-origin.ts";

/** One year: assets and images carry a content hash or version in their address. */
export const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * The strict policy of every public page: nothing inline, nothing from another host. Only the
 * embed page may be framed, by anyone; an audio file is the one thing fetched from the address
 * its owner gave.
 */
export function contentSecurityPolicy(opts: { frameable: boolean; mediaOrigin?: string | undefined; framesSelf?: boolean }): string {
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
    // Only the app's sharing page frames anything: this site's own embed page, as a preview.
    ...(opts.framesSelf ? ["frame-src 'self'"] : []),
    `frame-ancestors ${opts.frameable ? "*" : "'none'"}`,
  ].join("; ");
}

export function setPageHeaders(reply: FastifyReply, opts: { frameable: boolean; mediaOrigin?: string | undefined; noindex?: boolean; framesSelf?: boolean }): void {
  reply.header("content-security-policy", contentSecurityPolicy(opts));
  if (!opts.frameable) reply.header("x-frame-options", "DENY");
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "strict-origin-when-cross-origin");
  if (opts.noindex) reply.header("x-robots-tag", "noindex, nofollow");
}

/**
 * Sends a generated body with a strong ETag, answering 304 when the client already has it, and
 * compressed (off the event loop) for clients that take it. Bodies sent often are better kept as
 * an Answer (page-answers.ts), so that they are hashed and compressed once.
 */
export function sendWithEtag(req: FastifyRequest, reply: FastifyReply, body: string | Buffer, contentType: string, cacheControl: string) {
  return sendAnswer(req, reply, new Answer(typeof body === "string" ? Buffer.from(body) : body), contentType, cacheControl);
}
