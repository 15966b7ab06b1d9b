import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { newApiToken } from "../../domain/accounts.ts";
import { QuireError } from "../../domain/errors.ts";
import { isWebhookEvent, parseWebhookUrl, WEBHOOK_EVENTS, type WebhookEvent } from "../../domain/webhooks.ts";
import { html, type Html } from "../html.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { errorBox, noticeBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";

/** Deliveries the page lists, newest first (the store keeps a recent history, decisions §12). */
const RECENT_DELIVERIES = 25;

const EVENT_WORDS: Readonly<Record<WebhookEvent, string>> = {
  "document.active": "A document is published",
  "document.failed": "A document fails to convert",
  "document.deleted": "A document is deleted",
  "comment.created": "A reader comments",
};
const STATUS_WORDS: Readonly<Record<string, string>> = { pending: "Waiting", delivered: "Delivered", failed: "Failed" };

const time = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC";

/** The events a form ticked (a checkbox per event); none ticked is refused, not taken as all. */
function sentEvents(body: unknown): WebhookEvent[] | undefined {
  const raw = body !== null && typeof body === "object" && Object.hasOwn(body, "events") ? (body as Record<string, unknown>).events : undefined;
  const list = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string");
  if (list.some((e) => !isWebhookEvent(e))) return undefined;
  return [...new Set(list as WebhookEvent[])];
}

interface WebhooksView {
  secret?: string;
  notice?: string;
  error?: string;
  typed?: { url: string; events: WebhookEvent[] };
  status?: number;
}

async function webhooksPage(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, v: WebhooksView) {
  const account = accountOf(req);
  const hook = await ctx.store.webhooks.get(account.id);
  const deliveries = hook || v.typed === undefined ? (await ctx.store.webhookDeliveries.list(account.id, { startIndex: 0, pageSize: RECENT_DELIVERIES })).items : [];
  const shown = v.typed ?? hook ?? { url: "", events: [...WEBHOOK_EVENTS] };
  return sendAppPage(ctx, req, reply, { title: "Webhooks", section: "webhooks" }, (csrf) => html`<h1>Webhooks</h1>
${noticeBox(v.notice)}
${errorBox(v.error)}
<p>Quire posts a signed JSON message to your address when something happens to your documents (<code>svc.webhook.set</code> does the same from a program).</p>
${v.secret && html`<section class="secret" aria-labelledby="new-secret">
<h2 id="new-secret" tabindex="-1">The webhook's secret</h2>
<p><strong>Copy it now: it is shown only this once.</strong> Your receiver checks each message's signature with it.</p>
<dl>${copyable("webhook-secret", "Secret", v.secret)}</dl>
</section>`}
<h2>${hook ? "Your webhook" : "Add a webhook"}</h2>
<form method="post" action="${APP_BASE}/webhooks" class="stack">${csrfField(csrf)}
<label for="wh-url">Address</label>
<input id="wh-url" name="url" type="url" inputmode="url" required maxlength="2048" placeholder="https://example.com/quire-hook" value="${shown.url}">
<fieldset class="webhook-events"><legend>Send a message when</legend>
${WEBHOOK_EVENTS.map((e) => html`<label class="check"><input type="checkbox" name="events" value="${e}"${shown.events.includes(e) ? html` checked` : ""}> ${EVENT_WORDS[e]} <code>${e}</code></label>`)}
</fieldset>
<button type="submit" class="primary">${hook ? "Save" : "Add the webhook"}</button>
</form>
${hook && html`<div class="webhook-actions">
<form method="post" action="${APP_BASE}/webhooks/rotate" data-confirm="Make a new secret? Your receiver must use the new one from now on.">${csrfField(csrf)}<button type="submit">Make a new secret</button></form>
<form method="post" action="${APP_BASE}/webhooks/delete" data-confirm="Remove the webhook? Messages not sent yet are dropped.">${csrfField(csrf)}<button type="submit" class="danger">Remove the webhook</button></form>
</div>`}
<h2>Recent deliveries</h2>
${deliveries.length === 0
    ? html`<p>None yet.</p>`
    : html`<table class="keys deliveries">
<thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Document</th><th scope="col">State</th><th scope="col">Tries</th><th scope="col">Last error</th></tr></thead>
<tbody>
${deliveries.map((d) => html`<tr>
<td>${time(Number(d.createdAt))}</td>
<td><code>${d.event}</code></td>
<td><a href="${APP_BASE}/documents/${d.documentId}"><code>${d.documentId.slice(0, 12)}…</code></a></td>
<td>${STATUS_WORDS[d.status] ?? d.status}</td>
<td>${d.attempts}</td>
<td>${d.lastError}</td>
</tr>`)}
</tbody>
</table>`}`, v.status ?? 200);
}

function copyable(id: string, label: string, value: string): Html {
  return html`<dt>${label}</dt><dd><code id="${id}">${value}</code></dd><dd><button type="button" class="copy" data-copy="${id}">Copy<span class="sr-only"> ${label}</span></button></dd>`;
}

const NOTICES: Readonly<Record<string, string>> = {
  saved: "The webhook was saved.",
  removed: "The webhook was removed.",
  shown: "The secret was shown once, on the page after it was made. If you did not copy it, make a new one.",
};

/**
 * The account's webhook (issue 26 item 9): the same store and rules as `svc.webhook.set`,
 * `.delete`, `.rotate_secret` and `.deliveries`. Every POST redirects (post/redirect/get); a new
 * secret is shown once on the page after, opened from the store then (never kept in the session).
 */
export function registerWebhooksPage(scope: FastifyInstance, ctx: AppContext): void {
  scope.get("/webhooks", async (req, reply) => {
    const account = accountOf(req);
    let secret: string | undefined;
    if (req.session.webhookSecretOnce === true) {
      req.session.webhookSecretOnce = undefined;
      secret = (await ctx.store.webhooks.getForDelivery(account.id))?.secret;
    }
    return webhooksPage(ctx, req, reply, { secret, notice: secret ? undefined : NOTICES[field(req.query, "done") ?? ""] });
  });

  scope.post("/webhooks", async (req, reply) => {
    const account = accountOf(req);
    const rawUrl = (field(req.body, "url") ?? "").trim();
    const events = sentEvents(req.body);
    const typed = { url: rawUrl, events: events ?? [] };
    if (events === undefined) return webhooksPage(ctx, req, reply, { error: "Choose events from the list.", typed, status: 400 });
    if (events.length === 0) return webhooksPage(ctx, req, reply, { error: "Choose at least one event.", typed, status: 400 });
    let url: string;
    try {
      url = parseWebhookUrl(rawUrl, ctx.config.fetchAllowPrivate);
    } catch (err) {
      if (!(err instanceof QuireError)) throw err;
      return webhooksPage(ctx, req, reply, {
        error: "Give a full web address starting with http:// or https:// (at most 2048 characters, no user name or password, not an address of a private network).",
        typed, status: 400,
      });
    }
    const had = await ctx.store.webhooks.get(account.id);
    await ctx.store.webhooks.set(account.id, { url, events }, newApiToken(), Date.now());
    // A new webhook's secret is shown once; a changed one keeps its secret (receivers keep verifying).
    if (!had) req.session.webhookSecretOnce = true;
    return reply.redirect(`${APP_BASE}/webhooks?done=${had ? "saved" : "shown"}`, 303);
  });

  scope.post("/webhooks/rotate", async (req, reply) => {
    const rotated = await ctx.store.webhooks.rotateSecret(accountOf(req).id, newApiToken(), Date.now());
    if (rotated) req.session.webhookSecretOnce = true;
    return reply.redirect(`${APP_BASE}/webhooks${rotated ? "?done=shown" : ""}`, 303);
  });

  scope.post("/webhooks/delete", async (req, reply) => {
    await ctx.store.webhooks.delete(accountOf(req).id);
    return reply.redirect(`${APP_BASE}/webhooks?done=removed`, 303);
  });
}
