import type { FastifyReply, FastifyRequest } from "fastify";
import { html, type Html } from "../html.ts";
import type { Asset } from "../web-assets.ts";
import { scriptNonce, setPageHeaders } from "../web-headers.ts";
import type { AppContext, SignedInAccount } from "./app-context.ts";

/** The sections of the header's navigation. */
export type AppSection = "documents" | "upload" | "folders" | "keys" | "webhooks" | "statistics" | "comments";

export const APP_BASE = "/app";

const NAV: ReadonlyArray<{ section: AppSection; label: string; href: string }> = [
  { section: "documents", label: "Documents", href: `${APP_BASE}/documents` },
  { section: "upload", label: "Upload", href: `${APP_BASE}/upload` },
  { section: "folders", label: "Folders", href: `${APP_BASE}/folders` },
  { section: "keys", label: "Keys", href: `${APP_BASE}/keys` },
  { section: "webhooks", label: "Webhooks", href: `${APP_BASE}/webhooks` },
  { section: "statistics", label: "Statistics", href: `${APP_BASE}/statistics` },
  { section: "comments", label: "Comments", href: `${APP_BASE}/comments` },
];

export interface AppPageMeta {
  title: string;
  /** The navigation entry marked as the current one. */
  section?: AppSection;
  /** Absent on the sign-in page: no navigation then. */
  account?: SignedInAccount;
  /** The CSRF token every form on the page sends (see csrfField). */
  csrf: string;
  /** The page shows this site's embed page in a frame (the sharing page's preview). */
  framesSelf?: boolean;
  /** The page's own scripts, after app.js (each carries the answer's nonce). */
  scripts?: readonly Asset[];
  /** The sign-in form: a signed-out visitor gets a pre-session for its CSRF token. */
  preSession?: boolean;
  /** This answer's script nonce (sendAppPage makes one per answer). */
  nonce: string;
  /** Readers' comments waiting for approval (src/web/app/comments-page.ts), shown beside "Comments". */
  pendingComments?: number;
}

const pendingBadge = (n: number | undefined) =>
  n !== undefined && n > 0 && html` <span class="badge">${n}<span class="sr-only"> waiting for approval</span></span>`;

/** The hidden field that carries the CSRF token in a form (the app's check reads `_csrf`). */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

function header(meta: AppPageMeta): Html {
  if (!meta.account) return html`<header class="app-head"><span class="app-brand">Quire</span></header>`;
  return html`<header class="app-head">
<a class="app-brand" href="${APP_BASE}/documents">Quire</a>
<nav class="app-nav" aria-label="Main">
<ul>
${NAV.map((n) => html`<li><a href="${n.href}"${n.section === meta.section ? html` aria-current="page"` : ""}>${n.label}${n.section === "comments" && pendingBadge(meta.pendingComments)}</a></li>`)}
</ul>
</nav>
<form class="app-signout" method="post" action="${APP_BASE}/sign-out">${csrfField(meta.csrf)}
<span class="app-user">${meta.account.username}</span>
<button type="submit">Sign out</button>
</form>
</header>`;
}

/**
 * The shell of every app page: the header with navigation, the page's own body in `<main>`; one
 * stylesheet and deferred scripts carrying the answer's nonce, nothing inline, no event attributes
 * (the strict CSP of web-headers.ts). The CSRF token is also in a meta element, for the scripts'
 * `fetch` changes.
 */
export function appLayout(ctx: AppContext, meta: AppPageMeta, body: Html): Html {
  return html`<!doctype html>
<html lang="en" class="no-js">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="csrf-token" content="${meta.csrf}">
<title>${meta.title} · Quire</title>
<link rel="icon" href="${ctx.assets.icon.url}" type="image/svg+xml">
<link rel="stylesheet" href="${ctx.assets.appCss.url}">
${[ctx.assets.appJs, ...(meta.scripts ?? [])].map((a) => html`<script src="${a.url}" nonce="${meta.nonce}" defer></script>
`)}
</head>
<body class="app">
<a class="skip" href="#main">Skip to content</a>
${header(meta)}
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`;
}

/** Headers of every app answer: the strict CSP with this answer's nonce, never framed, cached or indexed. */
export function setAppHeaders(reply: FastifyReply, nonce: string, framesSelf = false): void {
  setPageHeaders(reply, { frameable: false, noindex: true, framesSelf, nonce });
  reply.header("cache-control", "no-store");
}

/**
 * Sends a page of the app: `body` gets the page's CSRF token for its forms. Every page goes through
 * here, so every one has the same headers and layout.
 */
export function sendAppPage(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  meta: Omit<AppPageMeta, "csrf" | "account" | "nonce" | "pendingComments">,
  body: (csrf: string) => Html,
  status = 200,
) {
  // The token's secret is kept in the session: a signed-out page other than the sign-in form (a 404,
  // an error) makes no pre-session and has no form to protect.
  const csrf = req.appAccount || meta.preSession ? reply.generateCsrf() : "";
  const nonce = scriptNonce();
  setAppHeaders(reply, nonce, meta.framesSelf ?? false);
  const page = appLayout(ctx, { ...meta, csrf, nonce, ...(req.appAccount ? { account: req.appAccount, pendingComments: req.appPendingComments } : {}) }, body(csrf));
  return reply.code(status).type("text/html; charset=utf-8").send(page.value);
}
