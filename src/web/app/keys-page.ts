import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { addKeyTo } from "../../accounts/account-admin.ts";
import { bearerTokenHash, bearerTokenPrefix, newBearerToken, TOKEN_PREFIX_LENGTH } from "../../domain/bearer-tokens.ts";
import { html, type Html } from "../html.ts";
import { linkOrigin } from "../public-origin.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { errorBox, noticeBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";
import { shortDate } from "./app-words.ts";

const API_KEY_RE = /^[a-z0-9]{32}$/;
/** A key's name: which program uses it. */
export const MAX_KEY_LABEL = 100;
/** A new key's secret is shown on the page its POST redirects to, if that page comes within this time. */
const SHOW_ONCE_MS = 10 * 60_000;

/** The addresses a client is configured with (decisions §1). */
function endpoints(ctx: AppContext, req: FastifyRequest): { normal: string; upload: string; uploadPort?: string } {
  // Shown only to the signed-in owner, so the request's own Host will do when no public address is set.
  const origin = linkOrigin(ctx.config, req).origin ?? "";
  const out: { normal: string; upload: string; uploadPort?: string } = { normal: `${origin}/1_0`, upload: `${origin}/upload/1_0` };
  if (ctx.config.uploadPort !== undefined) {
    const u = new URL(origin);
    u.port = String(ctx.config.uploadPort);
    out.uploadPort = `${u.origin}/1_0`;
  }
  return out;
}

function copyable(id: string, label: string, value: string): Html {
  return html`<dt>${label}</dt><dd><code id="${id}">${value}</code></dd><dd><button type="button" class="copy" data-copy="${id}">Copy<span class="sr-only"> ${label}</span></button></dd>`;
}

async function keysView(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, opts: { created?: { apiKey: string; apiSecret: string }; createdToken?: string; notice?: string; error?: string; label?: string; status?: number }) {
  const account = accountOf(req);
  const keys = await ctx.store.accounts.keysOf(account.id);
  const tokens = await ctx.store.apiTokens.listOf(account.id);
  const e = endpoints(ctx, req);
  return sendAppPage(ctx, req, reply, { title: "API keys", section: "keys" }, (csrf) => html`<h1>API keys</h1>
${noticeBox(opts.notice)}
${errorBox(opts.error)}
${opts.created && html`<section class="secret" aria-labelledby="new-key">
<h2 id="new-key" tabindex="-1">Your new key</h2>
<p><strong>Copy the secret now: it is shown only this once.</strong> Keep it where only your programs can read it.</p>
<dl>
${copyable("new-api-key", "apiKey", opts.created.apiKey)}
${copyable("new-api-secret", "apiSecret", opts.created.apiSecret)}
</dl>
</section>`}
<form method="post" action="${APP_BASE}/keys" class="add-key">${csrfField(csrf)}
<label for="key-label">Name of the new key (optional)</label>
<p class="hint" id="key-label-hint">Which program or person uses it, so you know which one to revoke.</p>
<div class="inline-field"><input id="key-label" name="label" maxlength="${MAX_KEY_LABEL}" aria-describedby="key-label-hint" value="${opts.label ?? ""}"><button type="submit" class="primary">Add a key</button></div>
</form>
<h2>Your keys</h2>
${keys.length === 0
    ? html`<p>No key yet.</p>`
    : html`<table class="keys">
<thead><tr><th scope="col">Name</th><th scope="col">apiKey</th><th scope="col">Created</th><th scope="col">State</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
<tbody>
${keys.map((k) => html`<tr>
<td>${k.label || html`<span class="hint">No name</span>`}</td>
<td><code>${k.apiKey}</code></td>
<td>${shortDate(k.createdAt)}</td>
<td>${k.revokedAt === null ? "Active" : `Revoked ${shortDate(k.revokedAt)}`}</td>
<td>${k.revokedAt === null && html`<form method="post" action="${APP_BASE}/keys/revoke" data-confirm="Revoke this key? Programs using it stop working at once.">${csrfField(csrf)}<input type="hidden" name="apiKey" value="${k.apiKey}"><button type="submit" class="danger">Revoke<span class="sr-only"> key ${k.label || k.apiKey}</span></button></form>`}</td>
</tr>`)}
</tbody>
</table>`}
<h2 id="tokens">Tokens for the v2 API</h2>
<p>Today's Issuu clients (the v2 API at <code>${e.normal.replace(/\/1_0$/, "/v2/")}</code>) send a bearer token instead of a signature.</p>
${opts.createdToken && html`<section class="secret" aria-labelledby="new-token">
<h3 id="new-token" tabindex="-1">Your new token</h3>
<p><strong>Copy it now: it is shown only this once.</strong></p>
<dl>${copyable("new-token-value", "Token", opts.createdToken)}</dl>
</section>`}
<form method="post" action="${APP_BASE}/keys/tokens" class="add-key">${csrfField(csrf)}<button type="submit" class="primary">Make a token</button></form>
${tokens.length === 0
    ? html`<p>No token yet.</p>`
    : html`<table class="keys">
<thead><tr><th scope="col">Token</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
<tbody>
${tokens.map((t) => html`<tr>
<td><code>${t.prefix}…</code></td>
<td>${shortDate(t.createdAt)}</td>
<td>${t.lastUsedAt === null ? "Never" : shortDate(t.lastUsedAt)}</td>
<td><form method="post" action="${APP_BASE}/keys/tokens/revoke" data-confirm="Revoke this token? Programs using it stop working at once.">${csrfField(csrf)}<input type="hidden" name="prefix" value="${t.prefix}"><button type="submit" class="danger">Revoke<span class="sr-only"> token ${t.prefix}</span></button></form></td>
</tr>`)}
</tbody>
</table>`}
<h2>Settings for your programs</h2>
<dl class="settings">
<dt>Endpoint</dt><dd><code>${e.normal}</code></dd>
<dt>Upload endpoint</dt><dd><code>${e.upload}</code>${e.uploadPort !== undefined && html` or <code>${e.uploadPort}</code>`}</dd>
<dt>Action prefix</dt><dd>${ctx.config.actionPrefixes.map((p, i) => html`${i > 0 ? ", " : ""}<code>${p}</code>`)} (as in <code>${ctx.config.actionPrefixes[0] ?? "svc"}.documents.list</code>)</dd>
<dt>Username</dt><dd><code>${account.username}</code></dd>
<dt>Signature</dt><dd>MD5 of the apiSecret followed by every parameter but <code>signature</code> and <code>file</code>, sorted by name, each as name then value.</dd>
</dl>`, opts.status ?? 200);
}

/** The account's API keys (issue 14 item 6): list, add (the secret shown once), revoke. */
export function registerKeysPage(scope: FastifyInstance, ctx: AppContext): void {
  scope.get("/keys", async (req, reply) => {
    const done = field(req.query, "done");
    const account = accountOf(req);
    // Post/redirect/get: what the POST made is shown on this page once, then forgotten (a reload shows the list only).
    const once = req.session.shownOnce;
    if (once !== undefined) req.session.shownOnce = undefined;
    if (once && "apiKey" in once) {
      const key = (await ctx.store.accounts.keysOf(account.id)).find((k) => k.apiKey === once.apiKey && k.revokedAt === null && Date.now() - k.createdAt < SHOW_ONCE_MS);
      const owner = key && (await ctx.store.accounts.getKeyOwnerForSigning(key.apiKey));
      if (owner && owner.accountId === account.id) return keysView(ctx, req, reply, { created: { apiKey: key.apiKey, apiSecret: owner.apiSecret } });
    }
    if (once && "token" in once) return keysView(ctx, req, reply, { createdToken: once.token });
    const notice =
      done === "revoked" ? "The key was revoked." : done === "token-revoked" ? "The token was revoked." :
      done === "created" || done === "token-created" ? "The secret was shown once, on the page after it was made, and is not shown again. If you did not copy it, revoke it and make another." : undefined;
    return keysView(ctx, req, reply, { notice });
  });

  scope.post("/keys", async (req, reply) => {
    const label = (field(req.body, "label") ?? "").trim();
    if (label.length > MAX_KEY_LABEL || /[\p{Cc}]/u.test(label)) {
      return keysView(ctx, req, reply, { error: `A key's name may have at most ${MAX_KEY_LABEL} characters, and no control characters.`, label, status: 400 });
    }
    const { apiKey } = await addKeyTo(ctx.store, accountOf(req).id, label);
    // Only the apiKey rides in the session; its secret is opened from the store when the page after shows it.
    req.session.shownOnce = { apiKey };
    return reply.redirect(`${APP_BASE}/keys?done=created`, 303);
  });

  // v2 bearer tokens (decisions §14): made here or by `quire accounts create-token`, shown once, stored hashed.
  scope.post("/keys/tokens", async (req, reply) => {
    const token = newBearerToken();
    await ctx.store.apiTokens.createFor(accountOf(req).id, bearerTokenHash(token), bearerTokenPrefix(token), Date.now());
    // Stored only hashed, so the token itself rides in the server-side session for the one redirect, and is cleared when shown.
    req.session.shownOnce = { token };
    return reply.redirect(`${APP_BASE}/keys?done=token-created#tokens`, 303);
  });

  scope.post("/keys/tokens/revoke", async (req, reply) => {
    const prefix = field(req.body, "prefix") ?? "";
    // Only one of the account's own tokens: another account's prefix is as if it did not exist.
    const revoked = prefix.length === TOKEN_PREFIX_LENGTH && (await ctx.store.apiTokens.revokePrefix(prefix, accountOf(req).id)) === 1;
    if (!revoked) return keysView(ctx, req, reply, { error: "This token does not exist or is revoked already.", status: 404 });
    return reply.redirect(`${APP_BASE}/keys?done=token-revoked`, 303);
  });

  scope.post("/keys/revoke", async (req, reply) => {
    const apiKey = field(req.body, "apiKey") ?? "";
    // Only the account's own active key: another account's key is as if it did not exist.
    const revoked = API_KEY_RE.test(apiKey) && (await ctx.store.accounts.revokeKeyOf(accountOf(req).id, apiKey, Date.now()));
    if (!revoked) return keysView(ctx, req, reply, { error: "This key does not exist or is revoked already.", status: 404 });
    return reply.redirect(`${APP_BASE}/keys?done=revoked`, 303);
  });
}
