import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DocumentRecord } from "../../domain/document.ts";
import { assertEmbeddable, assertStartPageExists, DEFAULT_HEIGHT, DEFAULT_WIDTH, embedHtml, MAX_EMBED_PIXELS, readEmbedShape } from "../../domain/embeds.ts";
import { QuireError } from "../../domain/errors.ts";
import type { EmbedRecord } from "../../store/embeds.ts";
import { coverPath, docPath, embedPath } from "../document-paths.ts";
import { html, type Html } from "../html.ts";
import { publicOrigin } from "../public-origin.ts";
import { shareMeta } from "../reader-page.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { describeFailure, errorBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";

const sharePath = (doc: Pick<DocumentRecord, "documentId">) => `${APP_BASE}/documents/${doc.documentId}/share`;

/** The card social sites draw from the reader's OpenGraph tags (shareMeta), or why there is none. */
function openGraphCard(doc: DocumentRecord, origin: string | undefined): Html {
  const meta = shareMeta({ doc, origin, embed: false });
  if (meta.noindex) {
    return html`<p>This document is private: its page tells social sites nothing, so a shared link shows only its address.</p>`;
  }
  const site = origin ? new URL(origin).host : "this server";
  return html`<figure class="og-card" aria-label="Preview as social sites show a link">
<img src="${coverPath(doc, "large")}" alt="" width="${doc.coverWidth || 600}" height="${doc.coverHeight || 800}">
<figcaption class="og-text"><p class="og-site">${site}</p><p class="og-title">${meta.title}</p>${meta.description && html`<p class="og-description">${meta.description.slice(0, 300)}</p>`}</figcaption>
</figure>
${!origin && html`<p class="hint">Social sites need the server's public address (QUIRE_PUBLIC_URL) to show the cover image.</p>`}`;
}

interface ShareView {
  doc: DocumentRecord;
  embeds: EmbedRecord[];
  origin: string | undefined;
  publicUrl: string | undefined;
  shape: { readerStartPage: number; width: number; height: number };
  error?: string;
}

function embedList(v: ShareView, csrf: string): Html {
  if (v.embeds.length === 0) return html`<p>No embed code yet: make one above.</p>`;
  return html`<ol class="embeds">${v.embeds.map((e) => {
    const id = `embed-code-${e.id}`;
    return html`<li><p>Page ${e.readerStartPage}, ${e.width} × ${e.height} pixels</p>
<label for="${id}" class="sr-only">Embed code ${e.id}</label>
<textarea id="${id}" class="share-code" readonly>${embedHtml(e, v.doc, v.publicUrl)}</textarea>
<button type="button" class="copy" data-copy="${id}">Copy code</button>
<form method="post" action="${sharePath(v.doc)}/delete" class="inline">${csrfField(csrf)}<input type="hidden" name="embedId" value="${e.id}"><button type="submit">Delete</button></form></li>`;
  })}</ol>`;
}

function shareBody(csrf: string, v: ShareView): Html {
  const { doc, shape } = v;
  const reader = `${v.origin ?? ""}${docPath(doc)}`;
  return html`<p><a href="${APP_BASE}/documents/${doc.documentId}">← ${doc.title}</a></p>
<h1>Share “${doc.title}”</h1>
${errorBox(v.error)}
<h2>Reader link</h2>
<p><a href="${reader}" id="reader-link">${reader}</a> <button type="button" class="copy" data-copy="reader-link">Copy link</button></p>
<div class="share-grid">
<section aria-labelledby="embed-h">
<h2 id="embed-h">Embed code</h2>
<form id="embed-form" method="post" action="${sharePath(doc)}" data-embed-path="${embedPath(doc)}">${csrfField(csrf)}
<div class="share-sizes">
<div><label for="e-page">Start page</label><input id="e-page" name="readerStartPage" type="number" inputmode="numeric" min="1" max="${doc.pageCount}" value="${shape.readerStartPage}"></div>
<div><label for="e-width">Width (px)</label><input id="e-width" name="width" type="number" inputmode="numeric" min="1" max="${MAX_EMBED_PIXELS}" value="${shape.width}"></div>
<div><label for="e-height">Height (px)</label><input id="e-height" name="height" type="number" inputmode="numeric" min="1" max="${MAX_EMBED_PIXELS}" value="${shape.height}"></div>
</div>
<p><button type="submit" class="primary">Make embed code</button></p>
</form>
${embedList(v, csrf)}
</section>
<section aria-labelledby="preview-h">
<h2 id="preview-h">Live preview</h2>
<div class="share-preview" tabindex="0" role="region" aria-label="Preview at the chosen size (scrolls when wider than this column)"><iframe id="embed-preview" title="Preview of the embedded reader" src="${embedPath(doc)}?page=${shape.readerStartPage}" width="${shape.width}" height="${shape.height}"></iframe></div>
</section>
</div>
<h2>As social sites show a link</h2>
${openGraphCard(doc, v.origin)}`;
}

/** Sharing a document (issue 14 item 5): reader link, embed codes with a live preview, the OpenGraph card. */
export function registerSharePage(scope: FastifyInstance, ctx: AppContext): void {
  const { store } = ctx;
  const show = async (req: FastifyRequest, reply: FastifyReply, doc: DocumentRecord, shape: ShareView["shape"], error?: string, status = 200) => {
    const account = accountOf(req);
    const { items } = await store.embeds.list(account.id, { documentId: doc.documentId, sortBy: "id", order: "desc", startIndex: 0, pageSize: 100 });
    const view: ShareView = { doc, embeds: items, origin: publicOrigin(ctx.config, req), publicUrl: ctx.config.publicUrl, shape, ...(error ? { error } : {}) };
    return sendAppPage(ctx, req, reply, { title: `Share ${doc.title}`, section: "documents", framesSelf: true, scripts: [ctx.assets.appShareJs] }, (csrf) => html`${shareBody(csrf, view)}`, status);
  };
  /** The account's document that can be shared (the API's rules: 300, 307 while converting, 308 if failed). */
  const sharable = async (req: FastifyRequest<{ Params: { id: string } }>) => assertEmbeddable(await store.documents.getById(accountOf(req).id, req.params.id));

  scope.get<{ Params: { id: string } }>("/documents/:id/share", async (req, reply) => {
    const doc = await sharable(req);
    // After "Make embed code" the form and its preview keep the page and size just chosen (the newest embed's).
    const { items } = await store.embeds.list(accountOf(req).id, { documentId: doc.documentId, sortBy: "id", order: "desc", startIndex: 0, pageSize: 1 });
    const last = items[0];
    return show(req, reply, doc, last && last.readerStartPage <= doc.pageCount
      ? { readerStartPage: last.readerStartPage, width: last.width, height: last.height }
      : { readerStartPage: 1, width: DEFAULT_WIDTH, height: DEFAULT_HEIGHT });
  });

  // As svc.document_embed.add: the same checks, the same record.
  scope.post<{ Params: { id: string } }>("/documents/:id/share", async (req, reply) => {
    const doc = await sharable(req);
    const get = (name: string) => {
      const v = field(req.body, name);
      return v === "" ? undefined : v;
    };
    try {
      const shape = readEmbedShape(get);
      const readerStartPage = shape.readerStartPage ?? 1;
      assertStartPageExists(doc, readerStartPage);
      const now = Date.now();
      await store.embeds.insert({ accountId: doc.accountId, documentId: doc.documentId, readerStartPage, width: shape.width ?? DEFAULT_WIDTH, height: shape.height ?? DEFAULT_HEIGHT, createdAt: now });
      return reply.redirect(sharePath(doc), 303);
    } catch (err) {
      if (!(err instanceof QuireError)) throw err;
      const typed = { readerStartPage: Number(get("readerStartPage")) || 1, width: Number(get("width")) || DEFAULT_WIDTH, height: Number(get("height")) || DEFAULT_HEIGHT };
      return show(req, reply, doc, typed, describeFailure(err).text, 400);
    }
  });

  // As svc.document_embed.delete: another account's embed is as if it did not exist.
  scope.post<{ Params: { id: string } }>("/documents/:id/share/delete", async (req, reply) => {
    const doc = await sharable(req);
    const id = Number(field(req.body, "embedId"));
    if (Number.isSafeInteger(id)) await store.embeds.delete(accountOf(req).id, id);
    return reply.redirect(sharePath(doc), 303);
  });
}
