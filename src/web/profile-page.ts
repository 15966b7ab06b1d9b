import type { DocumentRecord } from "../domain/document.ts";
import type { PublicFolder } from "../store/folders.ts";
import { coverPath, docPath, profilePath, publicFolderPath } from "./document-paths.ts";
import { html } from "./html.ts";
import { pageLayout } from "./page-layout.ts";
import { searchForm, searchResults, type SearchResultsView } from "./search-page.ts";
import type { WebAssets } from "./web-assets.ts";
import { countOf } from "../domain/counts.ts";

export const PROFILE_PAGE_SIZE = 24;

/** Public documents as cards, for the profile and the folders it shows. */
export function documentCards(docs: readonly DocumentRecord[]) {
  return docs.map((d) => {
    const ratio = d.coverWidth > 0 ? d.coverHeight / d.coverWidth : Math.SQRT2;
    // An explicit document's cover waits behind its reader's warning (issue 26 item 3).
    return html`<li class="card"><a href="${docPath(d)}">
${d.explicit
  ? html`<span class="cover-withheld">Marked as explicit: open to see</span>`
  : html`<img src="${coverPath(d, "medium")}" alt="" width="300" height="${Math.round(300 * ratio)}" loading="lazy" decoding="async">`}
<span class="card-title">${d.title}</span></a>
<span class="card-meta">${countOf(d.pageCount, "page")} · <time datetime="${new Date(d.publishDate).toISOString()}">${new Date(d.publishDate).toISOString().slice(0, 10)}</time></span>
</li>`;
  });
}

/** The folders a publisher chose to show (issue 26 item 9): name, public documents, a link. */
function folderList(username: string, folders: readonly PublicFolder[]) {
  return html`<section class="profile-folders" aria-labelledby="profile-folders-h">
<h2 id="profile-folders-h">Folders</h2>
<ul class="folder-links">${folders.map(
    (f) => html`<li><a href="${publicFolderPath(username, f.folderId)}">${f.name}</a> <span class="card-meta">${countOf(f.publicItems, "document")}</span></li>`,
  )}</ul>
</section>`;
}

export interface ProfileView {
  username: string;
  docs: readonly DocumentRecord[];
  totalCount: number;
  /** 1-based. */
  page: number;
  /** Trusted absolute origin, else undefined (the canonical link is then relative). */
  origin: string | undefined;
  assets: WebAssets;
  /** Folders shown on the profile (issue 26 item 9), listed on its first page. */
  folders: readonly PublicFolder[];
  /** `/<username>?q=`: the account's documents matching the query, in place of the list. */
  search?: SearchResultsView;
}

/** `/<username>`: public, active documents, newest first, paginated (decisions §10). */
export function profilePage(v: ProfileView) {
  const pages = Math.max(1, Math.ceil(v.totalCount / PROFILE_PAGE_SIZE));
  const here = profilePath(v.username);
  const at = (p: number) => (p === 1 ? here : `${here}?page=${p}`);
  const items = documentCards(v.docs);
  return pageLayout(
    {
      title: v.page > 1 ? `${v.username} — documents, page ${v.page}` : `${v.username} — documents`,
      description: `Documents published by ${v.username}`,
      canonical: (v.origin ?? "") + at(v.page),
      shareUrl: v.origin === undefined ? undefined : v.origin + at(v.page),
      noindex: v.search !== undefined,
    },
    v.assets,
    html`<main class="profile" id="profile">
<h1>${v.username}</h1>
${searchForm(here, v.search?.query ?? "", `Search ${v.username}'s documents`)}
${!v.search && v.page === 1 && v.folders.length > 0 && folderList(v.username, v.folders)}
${v.search ? searchResults(v.search) : v.totalCount === 0 ? html`<p>No public documents yet.</p>` : html`${v.folders.length > 0 && v.page === 1 && html`<h2>Documents</h2>`}<ol class="cards">${items}</ol>`}
${!v.search && pages > 1 && html`<nav class="pager" aria-label="Pages of documents">
${v.page > 1 && html`<a rel="prev" href="${at(v.page - 1)}">Newer</a>`}
<span>Page ${v.page} of ${pages}</span>
${v.page < pages && html`<a rel="next" href="${at(v.page + 1)}">Older</a>`}
</nav>`}
</main>`,
  );
}
