import type { SearchMatch } from "../store/search-index.ts";
import { coverPath, docPath, profilePath } from "./document-paths.ts";
import { readerQueryText } from "./reader-address.ts";
import { html, type Html } from "./html.ts";
import { pageLayout } from "./page-layout.ts";
import type { WebAssets } from "./web-assets.ts";

/** The search box and results shared by `/search` and `/<username>?q=` (decisions §11). */

export const SEARCH_PAGE_SIZE = 20;

export interface SearchResultsView {
  query: string;
  totalCount: number;
  matches: readonly SearchMatch[];
  /** 1-based. */
  page: number;
  /** The address of the page searched (`/search`, `/<username>`), for the pager's links. */
  here: string;
  /** Whether to name each document's owner (the search across accounts). */
  showOwner: boolean;
}

/** A snippet's `[[matched]]` words as <mark>, everything else as text. */
export function highlightSnippet(snippet: string): Html {
  const parts = snippet.split(/\[\[|\]\]/);
  // Even parts are outside the markers, odd ones inside (an unpaired marker only ends the mark early).
  return html`${parts.map((p, i) => (i % 2 === 1 ? html`<mark>${p}</mark>` : p))}`;
}

/** The reader at a page, with the query's words highlighted there (`#page=` keeps the reader at that page). */
function readerLink(m: SearchMatch, query: string, page?: number): string {
  // The reader's canonical address for this query (reader-address.ts): no redirect on the way.
  const q = new URLSearchParams({ q: readerQueryText(query) }).toString();
  return `${docPath(m.record)}?${q}${page === undefined ? "" : `#page=${page}`}`;
}

export function searchForm(action: string, query: string, label: string): Html {
  return html`<form class="search site-search" role="search" method="get" action="${action}">
<label for="site-q">${label}</label>
<input id="site-q" name="q" type="search" value="${query}" maxlength="500" enterkeyhint="search">
<button type="submit">Search</button>
</form>`;
}

function resultItem(m: SearchMatch, v: SearchResultsView): Html {
  const d = m.record;
  const first = m.hits[0]?.page;
  // An explicit document shows its title alone: cover, snippets and description wait behind its warning (issue 26 item 3).
  if (d.explicit) {
    return html`<li class="result">
<span class="result-cover cover-withheld" aria-hidden="true"></span>
<div class="result-body">
<h2 class="result-title"><a href="${docPath(d)}">${d.title}</a></h2>
<p class="result-meta">${v.showOwner && html`by <a href="${profilePath(d.username)}">${d.username}</a> · `}${d.pageCount} pages · marked as explicit</p>
</div>
</li>`;
  }
  const ratio = d.coverWidth > 0 ? d.coverHeight / d.coverWidth : Math.SQRT2;
  return html`<li class="result">
<a class="result-cover" href="${readerLink(m, v.query, first)}" tabindex="-1" aria-hidden="true"><img src="${coverPath(d, "small")}" alt="" width="120" height="${Math.round(120 * ratio)}" loading="lazy" decoding="async"></a>
<div class="result-body">
<h2 class="result-title"><a href="${readerLink(m, v.query, first)}">${d.title}</a></h2>
<p class="result-meta">${v.showOwner && html`by <a href="${profilePath(d.username)}">${d.username}</a> · `}${d.pageCount} pages</p>
${m.hits.length > 0
  ? html`<ul class="result-hits">${m.hits.map((h) => html`<li><a href="${readerLink(m, v.query, h.page)}">Page ${h.page}</a>: ${highlightSnippet(h.snippet)}</li>`)}</ul>`
  : d.description && html`<p class="result-description">${d.description.slice(0, 300)}</p>`}
</div>
</li>`;
}

export function searchResults(v: SearchResultsView): Html {
  if (!v.query.trim()) return html``;
  const pages = Math.max(1, Math.ceil(v.totalCount / SEARCH_PAGE_SIZE));
  const at = (p: number) => `${v.here}?q=${encodeURIComponent(v.query)}${p > 1 ? `&page=${p}` : ""}`;
  return html`<section class="search-results" aria-label="Search results">
<p class="result-count" role="status">${v.totalCount === 0
    ? html`No document matches “${v.query}”.`
    : html`${v.totalCount} ${v.totalCount === 1 ? "document matches" : "documents match"} “${v.query}”.`}</p>
${v.matches.length > 0 && html`<ol class="results-list">${v.matches.map((m) => resultItem(m, v))}</ol>`}
${pages > 1 && html`<nav class="pager" aria-label="Pages of results">
${v.page > 1 && html`<a rel="prev" href="${at(v.page - 1)}">Previous</a>`}
<span>Page ${v.page} of ${pages}</span>
${v.page < pages && html`<a rel="next" href="${at(v.page + 1)}">Next</a>`}
</nav>`}
</section>`;
}

/** `/search?q=`: every account's public, active documents (decisions §11). */
export function siteSearchPage(v: SearchResultsView, assets: WebAssets): Html {
  return pageLayout(
    // Results pages are not for search engines: endless, and each one's content is elsewhere.
    { title: v.query.trim() ? `“${v.query}” — search` : "Search documents", noindex: true },
    assets,
    html`<main class="profile site-search-page" id="search">
<h1>Search documents</h1>
${searchForm("/search", v.query, "Words, \"phrases\", -excluded")}
${searchResults(v)}
</main>`,
  );
}
