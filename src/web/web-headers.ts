import { randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Answer, sendAnswer } from "./page-answers.ts";
import { plainHttpOrigin } from "./public-origin.ts";
import { loadWebAssets } from "./web-assets.ts";

/** One year: assets and images carry a content hash or version in their address. */
export const IMMUTABLE = "public, max-age=31536000, immutable";

/** Where browsers send the reports of what a page's policy blocked (src/ops/csp-reports.ts). */
export const CSP_REPORT_PATH = "/_csp-report";

/** A fresh nonce for one answer's scripts (128 random bits). */
export function scriptNonce(): string {
  return randomBytes(16).toString("base64");
}

let publicScripts: string | undefined;
/** The public pages' script sources: the hashes of their two inline scripts (page-layout.ts), computed once. */
function publicScriptSources(): string {
  if (publicScripts === undefined) {
    const assets = loadWebAssets();
    publicScripts = `'${assets.scriptedFlag.hash}' '${assets.readerLoader.hash}' 'strict-dynamic'`;
  }
  return publicScripts;
}

/**
 * The strict policy of every page (issue 23 item 7): no script runs unless Quire put it there, so no
 * answer of this origin (a JSONP answer of the API is JavaScript) can ever run as a script on a page,
 * even if some markup were injected into one. Scripts are allowed by nonce or hash only, never by
 * address ('self' would allow `/1_0?…&jsonCallback=…`):
 *
 * - the app's pages are made for one answer and never cached: a nonce of their own (`nonce`), on
 *   each of their script elements;
 * - the public pages are built once and kept (reader cache, ETags, compressed forms), so a nonce
 *   would be shared by every reader of a cached page: they carry one fixed inline loader allowed by
 *   its hash, which adds the reader's script ('strict-dynamic' trusts what it adds).
 *
 * Nothing else from another host; only the embed page may be framed, by anyone; an audio file is the
 * one thing fetched from the address its owner gave. Violations are reported to CSP_REPORT_PATH.
 */
export function contentSecurityPolicy(opts: { frameable: boolean; mediaOrigin?: string | undefined; framesSelf?: boolean; nonce?: string }): string {
  // Only ever a plain origin: anything else could carry its own directives into the policy.
  const media = opts.mediaOrigin !== undefined && plainHttpOrigin(opts.mediaOrigin) === opts.mediaOrigin ? opts.mediaOrigin : "'none'";
  // A nonce is base64 from scriptNonce(); anything else must not reach the header.
  const scripts = opts.nonce !== undefined && /^[A-Za-z0-9+/]{22}==$/.test(opts.nonce) ? `'nonce-${opts.nonce}'` : publicScriptSources();
  return [
    "default-src 'none'",
    "img-src 'self'",
    `script-src ${scripts}`,
    "style-src 'self'",
    "connect-src 'self'",
    `media-src ${media}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    // Only the app's sharing page frames anything: this site's own embed page, as a preview.
    ...(opts.framesSelf ? ["frame-src 'self'"] : []),
    `frame-ancestors ${opts.frameable ? "*" : "'none'"}`,
    `report-uri ${CSP_REPORT_PATH}`,
  ].join("; ");
}

export function setPageHeaders(reply: FastifyReply, opts: { frameable: boolean; mediaOrigin?: string | undefined; noindex?: boolean; framesSelf?: boolean; nonce?: string }): void {
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
