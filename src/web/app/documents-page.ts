import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { blobKeys } from "../../blobs/blob-keys.ts";
import type { Access, DocumentRecord, DocumentState } from "../../domain/document.ts";
import { deleteDocuments, updateDocument } from "../../domain/document-operations.ts";
import { ORG_DOC_TYPES, type OrgDocType } from "../../domain/formats.ts";
import { QuireError } from "../../domain/errors.ts";
import type { DocumentSortField } from "../../store/documents.ts";
import type { FolderRecord } from "../../store/folders.ts";
import { coverPath, docPath } from "../document-paths.ts";
import { html, type Html } from "../html.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { errorBox, noticeBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";
import { failureReason, shortDate, STATE_LABELS } from "./app-words.ts";

export const DOCUMENTS_PAGE_SIZE = 20;
/** The state poll's answer is bounded: a page never shows more. */
const MAX_POLLED = 100;
/** Documents one bulk action may name: a page's worth several times over; more is refused whole. */
export const MAX_BULK = 100;
/** Documents made elsewhere that one poll adds to the top of the list. */
const MAX_NEW = DOCUMENTS_PAGE_SIZE;
const DOCUMENT_ID_RE = /^[0-9]{12}-[0-9a-f]{32}$/;
/** The title filter's longest text (the store matches it in titles and descriptions). */
const MAX_TITLE_FILTER = 200;

const SORTS: ReadonlyArray<{ value: string; label: string; by: DocumentSortField; order: "asc" | "desc" }> = [
  { value: "newest", label: "Newest first", by: "publishDate", order: "desc" },
  { value: "oldest", label: "Oldest first", by: "publishDate", order: "asc" },
  { value: "title", label: "Title A–Z", by: "title", order: "asc" },
  { value: "changed", label: "Last changed", by: "ep", order: "desc" },
  { value: "pages", label: "Most pages", by: "pageCount", order: "desc" },
];
const STATES = [["", "Any state"], ["A", "Published"], ["P", "Processing"], ["F", "Failed"]] as const;
const ACCESS = [["", "Any access"], ["public", "Public"], ["private", "Private"]] as const;

export interface DocumentsQuery {
  sort: (typeof SORTS)[number];
  state: DocumentState | "";
  access: Access | "";
  format: OrgDocType | "";
  /** Words in the title (or description), as typed; empty: any. */
  title: string;
  /** One of the account's folders (checked when the list is read: another's matches nothing). */
  folder: string;
  page: number;
}

/** The list's settings from the address; anything unknown falls back to the default (never an error). */
export function documentsQuery(query: unknown): DocumentsQuery {
  const pick = <T extends string>(name: string, allowed: readonly T[]): T | "" => {
    const v = field(query, name) ?? "";
    return (allowed as readonly string[]).includes(v) ? (v as T) : "";
  };
  const pageText = field(query, "page") ?? "";
  return {
    sort: SORTS.find((s) => s.value === field(query, "sort")) ?? SORTS[0]!,
    state: pick<DocumentState>("state", ["A", "P", "F"]),
    access: pick<Access>("access", ["public", "private"]),
    format: pick("format", ORG_DOC_TYPES),
    title: (field(query, "title") ?? "").trim().slice(0, MAX_TITLE_FILTER),
    folder: /^[A-Za-z0-9-]{1,64}$/.test(field(query, "folder") ?? "") ? field(query, "folder")! : "",
    page: /^[1-9][0-9]{0,6}$/.test(pageText) ? Number(pageText) : 1,
  };
}

function hrefWith(q: DocumentsQuery, page: number): string {
  const p = new URLSearchParams();
  if (q.sort !== SORTS[0]) p.set("sort", q.sort.value);
  if (q.state) p.set("state", q.state);
  if (q.access) p.set("access", q.access);
  if (q.format) p.set("format", q.format);
  if (q.title) p.set("title", q.title);
  if (q.folder) p.set("folder", q.folder);
  if (page > 1) p.set("page", String(page));
  const s = p.toString();
  return `${APP_BASE}/documents${s ? `?${s}` : ""}`;
}

const select = (name: string, label: string, options: ReadonlyArray<readonly [string, string]>, current: string) => html`<div>
<label for="f-${name}">${label}</label>
<select id="f-${name}" name="${name}">${options.map(([v, l]) => html`<option value="${v}"${v === current ? html` selected` : ""}>${l}</option>`)}</select>
</div>`;

function filters(q: DocumentsQuery, folders: FolderRecord[]): Html {
  return html`<form class="filters" method="get" action="${APP_BASE}/documents" aria-label="Sort and filter">
<div class="filter-title">
<label for="f-title">Title</label>
<input id="f-title" name="title" type="search" maxlength="${MAX_TITLE_FILTER}" value="${q.title}" placeholder="Words in the title">
</div>
${select("sort", "Sort", SORTS.map((s) => [s.value, s.label] as const), q.sort.value)}
${select("state", "State", STATES, q.state)}
${select("access", "Access", ACCESS, q.access)}
${select("format", "Format", [["", "Any format"], ...ORG_DOC_TYPES.map((t) => [t, t.toUpperCase()] as const)], q.format)}
${folders.length > 0 && select("folder", "Folder", [["", "Any folder"], ...folders.map((f) => [f.folderId, f.name] as const)], q.folder)}
<button type="submit">Show</button>
</form>`;
}

/** The state as a row shows it: a document still converting says so with an ellipsis, a failed one why. */
export function stateCell(doc: DocumentRecord): Html {
  const reason = failureReason(doc);
  const label = doc.state === "P" ? "Processing…" : doc.state === "F" ? "Failed:" : STATE_LABELS[doc.state];
  return html`<span class="state state-${doc.state}">${label}${reason !== undefined && html`<span class="state-reason">${reason}</span>`}</span>`;
}

/** A failed document's Retry: a new conversion of the same original (POST, so a reload never sends it twice). */
export function retryForm(doc: Pick<DocumentRecord, "documentId" | "title">, csrf: string, back?: "document"): Html {
  return html`<form class="retry" method="post" action="${APP_BASE}/documents/${doc.documentId}/retry">${csrfField(csrf)}${back && html`<input type="hidden" name="back" value="${back}">`}<button type="submit">Retry<span class="sr-only"> ${doc.title}</span></button></form>`;
}

/**
 * One document of the list. Only a published one has a publish date; the others show when they
 * were uploaded. The checkbox belongs to the bulk form (its `form` attribute), so the Retry form
 * beside it is not nested in another form.
 */
export function row(doc: DocumentRecord, csrf: string): Html {
  const editHref = `${APP_BASE}/documents/${doc.documentId}`;
  const published = doc.state === "A";
  const when = published ? doc.publishDate : doc.createdAt;
  return html`<li class="doc" data-id="${doc.documentId}" data-state="${doc.state}">
<input class="pick" type="checkbox" name="ids" value="${doc.documentId}" form="bulk" id="pick-${doc.documentId}" aria-label="Select ${doc.title}">
${published ? html`<img class="cover" src="${coverPath(doc, "small")}" alt="" width="72" height="96" loading="lazy">` : html`<span class="cover no-cover">No cover yet</span>`}
<h2><a href="${editHref}">${doc.title}</a></h2>
<dl>
<div><dt>State</dt><dd>${stateCell(doc)}</dd></div>
<div><dt>Pages</dt><dd data-pages>${doc.pageCount}</dd></div>
<div><dt>Access</dt><dd>${doc.access === "public" ? "Public" : "Private"}</dd></div>
<div><dt>Format</dt><dd>${doc.orgDocType.toUpperCase()}</dd></div>
<div><dt data-when>${published ? "Published" : "Uploaded"}</dt><dd><time datetime="${new Date(when).toISOString()}">${shortDate(when)}</time></dd></div>
</dl>
<div class="doc-actions"><a class="button" href="${editHref}">Edit<span class="sr-only"> ${doc.title}</span></a>
${published && html` <a class="button view" href="${docPath(doc)}">View<span class="sr-only"> ${doc.title}</span></a>`}
${doc.state === "F" && retryForm(doc, csrf)}</div>
</li>`;
}

function pager(q: DocumentsQuery, totalCount: number): Html {
  const pages = Math.max(1, Math.ceil(totalCount / DOCUMENTS_PAGE_SIZE));
  if (pages === 1) return html``;
  return html`<nav class="pager" aria-label="Pages">
${q.page > 1 ? html`<a href="${hrefWith(q, q.page - 1)}" rel="prev">Previous page</a>` : ""}
<span>Page ${Math.min(q.page, pages)} of ${pages}</span>
${q.page < pages ? html`<a href="${hrefWith(q, q.page + 1)}" rel="next">Next page</a>` : ""}
</nav>`;
}

/** One page of the account's documents, by the store's query that answers `svc.documents.list` too. */
export async function documentsPageData(ctx: AppContext, accountId: number, q: DocumentsQuery) {
  return ctx.store.documents.list({
    accountId,
    ...(q.access ? { access: q.access } : {}),
    ...(q.state ? { states: [q.state] } : {}),
    ...(q.format ? { orgDocTypes: [q.format] } : {}),
    ...(q.title ? { text: q.title } : {}),
    ...(q.folder ? { folderId: q.folder } : {}),
    sortBy: q.sort.by,
    order: q.sort.order,
    startIndex: (q.page - 1) * DOCUMENTS_PAGE_SIZE,
    pageSize: DOCUMENTS_PAGE_SIZE,
  });
}

/** Select many, then one action for all of them (delete, add to a folder, public or private). */
function bulkForm(csrf: string, folders: FolderRecord[], back: string): Html {
  return html`<form id="bulk" class="bulk" method="post" action="${APP_BASE}/documents/bulk" aria-label="Selected documents">
${csrfField(csrf)}<input type="hidden" name="back" value="${back}">
<div>
<label for="bulk-action">With the selected documents</label>
<select id="bulk-action" name="action">
<option value="">Choose an action</option>
<option value="public">Make public</option>
<option value="private">Make private</option>
${folders.length > 0 && html`<option value="folder">Add to the folder…</option>`}
<option value="delete">Delete for good</option>
</select>
</div>
${folders.length > 0 && html`<div>
<label for="bulk-folder">Folder</label>
<select id="bulk-folder" name="folderId">${folders.map((f) => html`<option value="${f.folderId}">${f.name}</option>`)}</select>
</div>`}
<button type="submit">Apply</button>
<p class="hint bulk-count" data-role="bulk-count" aria-live="polite"></p>
</form>`;
}

export function documentsBody(
  q: DocumentsQuery, totalCount: number, records: DocumentRecord[], notice: string | undefined, csrf: string,
  extra: { folders?: FolderRecord[]; error?: string; now?: number } = {},
): Html {
  const filtered = q.state !== "" || q.access !== "" || q.format !== "" || q.title !== "" || q.folder !== "";
  // New documents appear at the top only where they belong: the first page, newest first, unfiltered.
  const liveNew = !filtered && q.page === 1 && q.sort === SORTS[0];
  return html`<h1>Documents</h1>
${noticeBox(notice)}
${errorBox(extra.error)}
${filters(q, extra.folders ?? [])}
<p class="count">${totalCount === 1 ? "1 document" : `${totalCount} documents`}${filtered ? " match" : ""}</p>
<p id="live" class="sr-only" aria-live="polite"></p>
${records.length > 0 && bulkForm(csrf, extra.folders ?? [], hrefWith(q, q.page))}
${records.length === 0 && !liveNew
    ? html`<p>${filtered || q.page > 1 ? "No document here." : html`No document yet. <a href="${APP_BASE}/upload">Upload one</a>.`}</p>`
    : html`${records.length === 0 && html`<p data-role="empty">No document yet. <a href="${APP_BASE}/upload">Upload one</a>.</p>`}<ol class="docs" data-states-url="${APP_BASE}/documents/states.json"${liveNew ? html` data-since="${extra.now ?? Date.now()}"` : ""}>${records.map((d) => row(d, csrf))}</ol>`}
${pager(q, totalCount)}`;
}

const plural = (n: number) => (n === 1 ? "1 document" : `${n} documents`);
const BULK_DONE: Readonly<Record<string, (n: number) => string>> = {
  "bulk-delete": (n) => `${plural(n)} deleted.`,
  "bulk-public": (n) => `${plural(n)} made public.`,
  "bulk-private": (n) => `${plural(n)} made private.`,
  "bulk-folder": (n) => `${plural(n)} added to the folder (those already in it stay; a folder shows published ones).`,
};

const NOTICES: Readonly<Record<string, string>> = {
  deleted: "The document was deleted.",
  retried: "The document is being converted again.",
};

/** Where a bulk action goes back to: the list as it was (its filters), never elsewhere. */
function safeBack(back: string | undefined): string {
  const b = back ?? "";
  return /^\/app\/documents(\?[A-Za-z0-9._~\-%=&+]*)?$/.test(b) ? b : `${APP_BASE}/documents`;
}
const withDone = (href: string, done: string) => `${href}${href.includes("?") ? "&" : "?"}done=${done}`;

/** The ids a form sent under `ids` (one per checkbox), as they came. */
function sentIds(body: unknown): string[] {
  if (body === null || typeof body !== "object" || !Object.hasOwn(body, "ids")) return [];
  const raw = (body as Record<string, unknown>).ids;
  return (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string");
}

async function foldersOf(ctx: AppContext, accountId: number): Promise<FolderRecord[]> {
  return (await ctx.store.folders.listPage(accountId, { sortBy: "name", order: "asc", startIndex: 0, pageSize: 1000 })).items;
}

/** The account's documents (issue 14 item 2): sorted, filtered, paged; states follow live. */
export function registerDocumentsPage(scope: FastifyInstance, ctx: AppContext): void {
  scope.get("/documents", async (req, reply) => {
    const account = accountOf(req);
    const q = documentsQuery(req.query);
    const now = Date.now();
    const [{ totalCount, records }, folders] = await Promise.all([documentsPageData(ctx, account.id, q), foldersOf(ctx, account.id)]);
    const done = field(req.query, "done") ?? "";
    const n = Number(field(req.query, "n") ?? "");
    const notice = NOTICES[done] ?? (BULK_DONE[done] && Number.isInteger(n) && n >= 0 && n <= MAX_BULK ? BULK_DONE[done](n) : undefined);
    return sendAppPage(ctx, req, reply, { title: "Documents", section: "documents" }, (csrf) => documentsBody(q, totalCount, records, notice, csrf, { folders, now }));
  });

  // A new conversion of a failed document's original (the same job an upload makes).
  scope.post<{ Params: { documentId: string } }>("/documents/:documentId/retry", async (req, reply) => {
    const account = accountOf(req);
    const { documentId } = req.params;
    const retried = DOCUMENT_ID_RE.test(documentId) && (await ctx.store.documents.retryFailed(account.id, documentId, Date.now(), req.id));
    // Not the account's, or not failed (retried already from another tab): nothing to do, said on its page.
    if (!retried) throw new QuireError(DOCUMENT_ID_RE.test(documentId) && (await ctx.store.documents.getById(account.id, documentId)) ? "307" : "300");
    const back = field(req.body, "back") === "document" ? `${APP_BASE}/documents/${documentId}` : `${APP_BASE}/documents`;
    return reply.redirect(withDone(back, "retried"), 303);
  });

  scope.post("/documents/bulk", async (req, reply) => {
    const account = accountOf(req);
    const back = safeBack(field(req.body, "back"));
    const action = field(req.body, "action") ?? "";
    const raw = sentIds(req.body);
    const refuse = async (error: string) => {
      const q = documentsQuery(Object.fromEntries(new URLSearchParams(back.split("?")[1] ?? "")));
      const [{ totalCount, records }, folders] = await Promise.all([documentsPageData(ctx, account.id, q), foldersOf(ctx, account.id)]);
      return sendAppPage(ctx, req, reply, { title: "Documents", section: "documents" }, (csrf) => documentsBody(q, totalCount, records, undefined, csrf, { folders, error }), 400);
    };
    if (!["public", "private", "folder", "delete"].includes(action)) return refuse("Choose what to do with the selected documents.");
    if (raw.length === 0) return refuse("Select at least one document first.");
    if (raw.length > MAX_BULK) return refuse(`At most ${MAX_BULK} documents can be changed at once.`);
    // Only the account's own documents: another account's id is passed over as if it did not exist.
    const own: DocumentRecord[] = [];
    for (const id of new Set(raw)) {
      if (!DOCUMENT_ID_RE.test(id)) continue;
      const doc = await ctx.store.documents.getById(account.id, id);
      if (doc) own.push(doc);
    }
    const now = Date.now();
    let n = 0;
    if (action === "delete") {
      const removed = await deleteDocuments(
        ctx.store.documents,
        async (blobId) => void (await ctx.blobs.deletePrefix(blobKeys.prefix(blobId))),
        (err, documentId) => req.log.error({ err, documentId }, "removing a deleted document's files failed"),
        account.id, own.map((d) => d.documentId), now,
      );
      n = removed.length;
    } else if (action === "folder") {
      const folderId = field(req.body, "folderId") ?? "";
      if (!(await ctx.store.folders.get(account.id, folderId))) return refuse("Choose one of your folders.");
      const { items } = await ctx.store.bookmarks.listPage(account.id, { scope: { kind: "folder", folderId }, sortBy: "created", order: "asc", startIndex: 0, pageSize: 10_000 });
      const inFolder = new Set(items.map((b) => b.documentId));
      for (const doc of own) {
        if (inFolder.has(doc.documentId)) continue;
        // As svc.bookmark.add: a published document of the account, at page 1.
        const target = await ctx.store.bookmarks.findBookmarkable(account.id, account.username, doc.documentId);
        if (!target || target.accountId !== account.id) continue;
        await ctx.store.bookmarks.add(account.id, randomUUID(), target, 1, [folderId], now);
        n++;
      }
    } else {
      const access = action as Access;
      for (const doc of own) {
        if (doc.access === access) continue;
        await updateDocument(ctx.store.documents, account.id, doc.documentId, { access }, now);
        n++;
      }
    }
    return reply.redirect(withDone(back, `bulk-${action}`) + `&n=${n}`, 303);
  });

  // What the page's script polls while documents are processing: their states, never cached.
  scope.get("/documents/states.json", async (req, reply) => {
    const account = accountOf(req);
    const ids = (field(req.query, "ids") ?? "").split(",").filter((id) => DOCUMENT_ID_RE.test(id)).slice(0, MAX_POLLED);
    const states = [];
    for (const id of new Set(ids)) {
      const doc = await ctx.store.documents.getById(account.id, id);
      if (!doc) continue;
      states.push({
        documentId: doc.documentId, state: doc.state, label: STATE_LABELS[doc.state], reason: failureReason(doc) ?? "",
        pageCount: doc.pageCount, title: doc.title, cover: doc.state === "A" ? coverPath(doc, "small") : "",
        view: doc.state === "A" ? docPath(doc) : "",
      });
    }
    // `since`: documents made after it (uploaded in another tab, by the API), as rows for the top of the list.
    const sinceText = field(req.query, "since") ?? "";
    const now = Date.now();
    let added: Array<{ documentId: string; row: string }> | undefined;
    if (/^[0-9]{1,15}$/.test(sinceText)) {
      const csrf = reply.generateCsrf();
      const recent = await ctx.store.documents.recentOf(account.id, Number(sinceText), MAX_NEW);
      added = recent.map((doc) => ({ documentId: doc.documentId, row: row(doc, csrf).value }));
    }
    return reply.header("cache-control", "no-store").header("x-content-type-options", "nosniff").send({ states, now, ...(added ? { added } : {}) });
  });
}
