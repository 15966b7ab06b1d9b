import type { DocumentRecord } from "../domain/document.ts";
import { countOf } from "../domain/counts.ts";
import { coverPath, docPath } from "./document-paths.ts";
import { html } from "./html.ts";
import { pageLayout } from "./page-layout.ts";
import { searchForm } from "./search-page.ts";
import type { WebAssets } from "./web-assets.ts";

/** Documents the home page shows: one screen of covers. */
export const HOME_RECENT = 12;

/**
 * `/` (issue 26 item 9): what a visitor who types the bare address finds. A way to the publisher's
 * sign-in, the search over every public document, and the newest public documents. An operator who
 * wants something else sets QUIRE_HOME (a redirect, src/config.ts).
 */
export function homePage(recent: readonly DocumentRecord[], assets: WebAssets, origin: string | undefined) {
  const items = recent.map((d) => {
    const ratio = d.coverWidth > 0 ? d.coverHeight / d.coverWidth : Math.SQRT2;
    return html`<li class="card"><a href="${docPath(d)}">
<img src="${coverPath(d, "medium")}" alt="" width="300" height="${Math.round(300 * ratio)}" loading="lazy" decoding="async">
<span class="card-title">${d.title}</span></a>
<span class="card-meta">${d.username} · ${countOf(d.pageCount, "page")}</span>
</li>`;
  });
  return pageLayout(
    { title: "Quire — published documents", description: "Documents published on this Quire", canonical: `${origin ?? ""}/` },
    assets,
    html`<main class="profile home" id="home">
<header class="home-head">
<h1>Published documents</h1>
<p class="home-sign-in"><a href="/app/sign-in">Publishers: sign in</a></p>
</header>
${searchForm("/search", "", "Search every public document")}
<h2>Recently published</h2>
${items.length === 0 ? html`<p>No public documents yet.</p>` : html`<ol class="cards">${items}</ol>`}
</main>`,
  );
}
