import type { DocumentRecord } from "../domain/document.ts";
import { countOf } from "../domain/counts.ts";
import type { PublicFolder } from "../store/folders.ts";
import { profilePath, publicFolderPath } from "./document-paths.ts";
import { html } from "./html.ts";
import { pageLayout } from "./page-layout.ts";
import { documentCards, PROFILE_PAGE_SIZE } from "./profile-page.ts";
import type { WebAssets } from "./web-assets.ts";

export interface FolderPageView {
  username: string;
  folder: PublicFolder;
  docs: readonly DocumentRecord[];
  totalCount: number;
  /** 1-based. */
  page: number;
  /** Trusted absolute origin, else undefined (the canonical link is then relative). */
  origin: string | undefined;
  assets: WebAssets;
}

/**
 * `/<username>/folders/<folderId>`: a folder its owner shows on the profile (issue 26 item 9),
 * its public, active documents as the profile's cards, newest placement first. Server-rendered:
 * no script of its own.
 */
export function folderPage(v: FolderPageView) {
  const pages = Math.max(1, Math.ceil(v.totalCount / PROFILE_PAGE_SIZE));
  const here = publicFolderPath(v.username, v.folder.folderId);
  const at = (p: number) => (p === 1 ? here : `${here}?page=${p}`);
  const title = `${v.folder.name} — a folder of ${v.username}`;
  return pageLayout(
    {
      title: v.page > 1 ? `${title}, page ${v.page}` : title,
      description: v.folder.description || `Documents in ${v.username}'s folder ${v.folder.name}`,
      canonical: (v.origin ?? "") + at(v.page),
      shareUrl: v.origin === undefined ? undefined : v.origin + at(v.page),
      noindex: false,
    },
    v.assets,
    html`<main class="profile" id="profile">
<p class="folder-back"><a href="${profilePath(v.username)}">← ${v.username}</a></p>
<h1>${v.folder.name}</h1>
${v.folder.description && html`<p class="folder-description">${v.folder.description}</p>`}
<p class="card-meta">${countOf(v.totalCount, "document")}</p>
${v.totalCount === 0 ? html`<p>No public documents in this folder yet.</p>` : html`<ol class="cards">${documentCards(v.docs)}</ol>`}
${pages > 1 && html`<nav class="pager" aria-label="Pages of documents">
${v.page > 1 && html`<a rel="prev" href="${at(v.page - 1)}">Newer</a>`}
<span>Page ${v.page} of ${pages}</span>
${v.page < pages && html`<a rel="next" href="${at(v.page + 1)}">Older</a>`}
</nav>`}
</main>`,
  );
}
