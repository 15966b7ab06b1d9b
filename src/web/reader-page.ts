import type { DocumentRecord } from "../domain/document.ts";
import {
  coverPath, docPath, downloadPath, embedPath, imageVersion, pageImagePath, pageSrcset, profilePath, textBasePath, thumbImagePath,
} from "./document-paths.ts";
import { html, safeHttpUrl, trusted, type Html } from "./html.ts";
import { markTerms } from "./snippet-marks.ts";
import { oembedLinks } from "./oembed.ts";
import { pageLayout } from "./page-layout.ts";
import { plainHttpOrigin } from "./public-origin.ts";
import type { SearchHit } from "./page-text.ts";
import type { WebAssets } from "./web-assets.ts";
import { PAGE_WIDTHS } from "../domain/page-images.ts";
import { countOf } from "../domain/counts.ts";

export interface ReaderView {
  doc: DocumentRecord;
  /** Each page's text, bounded and already escaped for HTML (index page - 1). */
  pageHtml: readonly string[];
  /** Trusted absolute origin for canonical and sharing addresses; undefined: relative canonical, no og:url/og:image. */
  origin: string | undefined;
  assets: WebAssets;
  embed: boolean;
  startPage: number;
  query: string;
  hits: readonly SearchHit[] | undefined;
  /** The reader confirmed they want to see an `explicit` document. */
  consented: boolean;
  /** This page's address with the confirmation added. */
  consentHref: string;
  /** Ratings and comments under the pages (reader-comments.ts), shown with the document. */
  feedback?: Html;
}

const READ_WIDTH = PAGE_WIDTHS.read;
const THUMB_WIDTH = PAGE_WIDTHS.thumb;

function pageRatio(doc: DocumentRecord): number {
  // Covers are page 1 at known sizes: their ratio sizes every page box until its image arrives.
  return doc.coverWidth > 0 && doc.coverHeight > 0 ? doc.coverHeight / doc.coverWidth : Math.SQRT2;
}

function pageHeight(doc: DocumentRecord, width: number): number {
  return Math.round(width * pageRatio(doc));
}

/** The page's first view before any script: the smaller image that fits the paged view by width or by height. */
const FIRST_VIEW_URL_WIDTH = 800;
/**
 * The width a page takes in the reader's paged view (reader.js sizePages: the stage's width, or its
 * height under the header, the toolbar and the thumbnail strip, about 340 px with the stage's padding, by the page's ratio), so the srcset
 * choice made from the HTML is the one the script confirms: the first page is fetched once, at its size.
 */
function pageSizes(doc: DocumentRecord): string {
  const shown = `min(calc(100vw - 24px), calc((100vh - 340px) * ${(1 / pageRatio(doc)).toFixed(3)}))`;
  return `(min-resolution: ${DENSITY_CAP.from}dppx) calc(${shown} * ${DENSITY_CAP.scale}), ${shown}`;
}

/**
 * Screens of 2.5 device pixels per CSS pixel and more (phones at 3x) are served for 2x: a page
 * 366 CSS px wide takes the 800 px image (2.2 device pixels per CSS pixel) instead of the 1200 px
 * one, at a fraction of its bytes: the first view of a phone on a slow network stays within its
 * time (docs/images.md, "The first view"). reader.js sizeFigure applies the same numbers, so the
 * script confirms the HTML's choice and page 1 is fetched once.
 */
const DENSITY_CAP = { from: 2.5, scale: 0.667 } as const;

/** The start page's image, for the page's preload link (the same srcset and sizes as its <img>). */
export function firstImagePreload(v: Pick<ReaderView, "doc" | "startPage" | "embed">): { srcset: string; sizes: string } {
  return { srcset: pageSrcset(v.doc, v.startPage), sizes: pageSizes(v.doc) };
}

/** Whether the document's content may be shown: not explicit, or the reader agreed (issue 26 item 3). */
export const contentShown = (v: Pick<ReaderView, "doc" | "consented">): boolean => !v.doc.explicit || v.consented;

/**
 * What the reader's page tells search engines and social sites; also the app's sharing preview.
 * An explicit document tells them its title alone: no one has agreed to see its cover or words.
 */
export function shareMeta(v: Pick<ReaderView, "doc" | "origin" | "embed">) {
  const { doc } = v;
  return {
    title: `${doc.title} — ${doc.username}`,
    description: doc.explicit ? "" : doc.description,
    canonical: (v.origin ?? "") + docPath(doc),
    shareUrl: v.origin === undefined ? undefined : v.origin + docPath(doc),
    image: v.origin === undefined || doc.explicit ? undefined : v.origin + coverPath(doc, "large"),
    noindex: doc.access === "private" || v.embed,
    lang: doc.language || "en",
    oembed: v.origin === undefined || v.embed ? undefined : oembedLinks(doc, v.origin),
  };
}

function docHeader(v: ReaderView): Html {
  const { doc } = v;
  const info = safeHttpUrl(doc.infoLink);
  // Offered only when its origin can be the page's media-src (web-routes sets the same one).
  const sound = plainHttpOrigin(doc.soundUrl) ? safeHttpUrl(doc.soundUrl) : undefined;
  const details = [
    contentShown(v) && doc.description && html`<p class="doc-description">${doc.description}</p>`,
    contentShown(v) && doc.tags.length > 0 && html`<ul class="doc-tags" aria-label="Tags">${doc.tags.map((t) => html`<li>${t}</li>`)}</ul>`,
    (info || doc.downloadable) && html`<p class="doc-links">
${info && html`<a href="${info}" rel="noopener nofollow ugc">More information</a>`}
${doc.downloadable && html`<a class="download" href="${downloadPath(doc)}" download>Download</a>`}
</p>`,
    sound && html`<audio class="doc-sound" controls preload="none" src="${sound}">Audio: <a href="${sound}" rel="noopener nofollow ugc">listen</a></audio>`,
  ].filter((d): d is Html => Boolean(d));
  // One compact bar: page 1 is in the first screen, the document's details one click away (issue 26 item 7).
  return html`<header class="doc-head">
<div class="doc-id">
<h1 class="doc-title">${doc.title}</h1>
<p class="doc-owner">by <a href="${profilePath(doc.username)}">${doc.username}</a> · ${countOf(doc.pageCount, "page")}</p>
</div>
${contentShown(v) && searchForm(v)}
${details.length > 0 && html`<details class="doc-details"><summary>Details</summary><div class="doc-details-body">${details}</div></details>`}
</header>`;
}

function toolbar(v: ReaderView): Html {
  const n = v.doc.pageCount;
  return html`<div class="toolbar" role="toolbar" aria-label="Reader controls" hidden>
<button type="button" data-action="prev" aria-label="Previous page">‹</button>
<form class="goto" data-role="goto"><label for="page-number" class="sr-only">Page number</label><input id="page-number" name="page" type="number" min="1" max="${n}" value="${v.startPage}" inputmode="numeric"><span class="page-total">of ${n}</span></form>
<button type="button" data-action="next" aria-label="Next page">›</button>
<button type="button" data-action="zoom-out" aria-label="Zoom out">−</button>
<button type="button" data-action="zoom-in" aria-label="Zoom in">+</button>
<button type="button" data-action="mode" aria-label="Continuous scrolling" aria-pressed="false">⇅</button>
<button type="button" data-action="fullscreen" aria-label="Full screen">⛶</button>
</div>`;
}

function searchForm(v: ReaderView): Html {
  return html`<form class="search" role="search" method="get" data-role="search">
<label for="search-q" class="sr-only">Search this document</label>
<input id="search-q" name="q" type="search" value="${v.query}" placeholder="Words to find">
<button type="submit">Search</button>
</form>`;
}

/** The server's answer to a search without script; with script reader.js draws the same list, with next and previous. */
function searchResults(v: ReaderView): Html {
  const results = v.hits === undefined
    ? html``
    : v.hits.length === 0
      ? html`<p>No page contains “${v.query}”.</p>`
      : html`<p>${countOf(v.hits.length, "page")} with “${v.query}”:</p><ol>${v.hits.map(
          (h) => html`<li><a href="#page=${h.page}" data-page="${h.page}">Page ${h.page}</a> <span class="snippet">${markTerms(h.snippet, v.query)}</span></li>`,
        )}</ol>`;
  return html`<section class="results" data-role="results" aria-live="polite" aria-label="Search results">${results}</section>`;
}

function pageFigure(v: ReaderView, n: number): Html {
  const { doc } = v;
  const text = v.pageHtml[n - 1] ?? "";
  // Page 1 (or the start page) is in the server's HTML at once; the rest load as they come into view.
  const eager = n === v.startPage;
  // The start page is shown and sized by reader.css before reader.js runs (its width for height
  // ratio, data-wh), so nothing moves when the script takes over (issue 30: CLS 0).
  return html`<figure class="${eager ? "page shown" : "page"}" id="page=${n}" data-page="${n}"${eager ? html` data-wh="${(1 / pageRatio(doc)).toFixed(4)}"` : ""}>
<img src="${pageImagePath(doc, FIRST_VIEW_URL_WIDTH, n)}" srcset="${pageSrcset(doc, n)}" sizes="${pageSizes(doc)}" width="${READ_WIDTH}" height="${pageHeight(doc, READ_WIDTH)}" alt="Page ${n}"${eager ? html` fetchpriority="high" elementtiming="first-page"` : html` loading="lazy" decoding="async"`}>
<figcaption class="page-text"><span class="page-label">Page ${n}</span>${text && html`<span class="page-words">${trusted(text)}</span>`}</figcaption>
</figure>`;
}

function thumbs(v: ReaderView): Html {
  const { doc } = v;
  const items = [];
  for (let n = 1; n <= doc.pageCount; n++) {
    items.push(html`<li><a href="#page=${n}" data-page="${n}" aria-label="Page ${n}"><img src="${thumbImagePath(doc, n)}" width="${THUMB_WIDTH}" height="${pageHeight(doc, THUMB_WIDTH)}" alt="" loading="lazy" decoding="async" fetchpriority="low"><span>${n}</span></a></li>`);
  }
  return html`<nav class="thumbs" aria-label="Pages"><ol>${items}</ol></nav>`;
}

function explicitNotice(v: ReaderView): Html {
  return html`<section class="notice" role="alert">
<h2>This document is marked as explicit</h2>
<p>It may contain material some readers do not want to see.</p>
<p><a class="button" href="${v.consentHref}">Show the document</a></p>
</section>`;
}

/** The reader (and, with `embed`, the reader alone for iframes). Works as a plain list of pages without script. */
export function readerPage(v: ReaderView): Html {
  const { doc } = v;
  const pages = [];
  for (let n = 1; n <= doc.pageCount; n++) pages.push(pageFigure(v, n));
  const body = v.doc.explicit && !v.consented
    ? explicitNotice(v)
    : html`<div class="reader-body">
${toolbar(v)}
<div class="stage" data-role="stage" tabindex="0" role="region" aria-label="Document pages"><div class="pages" data-role="pages">${pages}</div></div>
${thumbs(v)}
</div>`;
  const shown = !v.doc.explicit || v.consented;
  return pageLayout(
    { ...shareMeta(v), bodyClass: v.embed ? "embedded" : "", preloadImage: doc.explicit && !v.consented ? undefined : firstImagePreload(v) },
    v.assets,
    html`<main class="reader" id="reader" data-mode="paged" data-pages="${doc.pageCount}" data-start-page="${v.startPage}" data-text="${textBasePath(doc)}" data-search="${docPath(doc)}/search.json" data-version="${imageVersion(doc)}" data-embed="${v.embed ? "1" : "0"}">
<div class="first-screen">
${v.embed
  ? html`<h1 class="sr-only">${doc.title}</h1><p class="embed-title"><a href="${docPath(doc)}" target="_blank" rel="noopener">${doc.title}</a></p>`
  : docHeader(v)}
${!v.embed && contentShown(v) && searchResults(v)}
${body}
${v.embed && shown && v.feedback}
</div>
${!v.embed && shown && v.feedback}
${!v.embed && html`<p class="embed-link sr-only"><a href="${embedPath(doc)}">Embeddable reader</a></p>`}
</main>`,
  );
}

/** How far a document split into page ranges is (store/page-ranges.ts); none for a short one. */
export interface ConversionProgress {
  pageCount: number;
  pagesReady: number;
}

/** "120 of 352 pages ready", with a bar; reader.js keeps both up to date from state.json. */
function progressFigure(p: ConversionProgress): Html {
  return html`<div class="progress" data-role="progress">
<progress max="${p.pageCount}" value="${p.pagesReady}" aria-labelledby="pages-ready"></progress>
<p id="pages-ready" data-role="pages-ready">${p.pagesReady} of ${p.pageCount} pages ready</p>
</div>`;
}

/**
 * `P`: a page that reloads itself until the document is published (decisions §10), with how many
 * pages are ready when the document is converted as page ranges. The pages themselves are not
 * shown before `A`: a document that ends in `F` must never have been published, even in part.
 */
export function processingPage(doc: DocumentRecord, assets: WebAssets, progress?: ConversionProgress): Html {
  return pageLayout(
    { title: `${doc.title} — being processed`, noindex: true, refreshSeconds: 10, lang: doc.language || "en" },
    assets,
    html`<main class="state-page" id="state" data-state="P" data-poll="${docPath(doc)}/state.json">
<h1>${doc.title}</h1>
<p role="status">This document is being processed. This page refreshes itself when it is ready.</p>
${progress && progressFigure(progress)}
<p><a href="${docPath(doc)}">Check again</a></p>
<p><a href="${profilePath(doc.username)}">More from ${doc.username}</a></p>
</main>`,
  );
}

/** `F`: a plain notice (the technical reason is the owner's to read through the API). */
export function failedPage(doc: DocumentRecord, assets: WebAssets): Html {
  return pageLayout(
    { title: `${doc.title} — could not be published`, noindex: true, lang: doc.language || "en" },
    assets,
    html`<main class="state-page" id="state" data-state="F">
<h1>${doc.title}</h1>
<p>This document could not be published.</p>
<p><a href="${profilePath(doc.username)}">More from ${doc.username}</a></p>
</main>`,
  );
}

/** Not found, in the same look as the rest. */
export function notFoundPage(assets: WebAssets): Html {
  return pageLayout(
    { title: "Not found", noindex: true },
    assets,
    html`<main class="state-page"><h1>Not found</h1><p>There is no page at this address.</p></main>`,
  );
}
