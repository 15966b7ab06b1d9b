import type { FastifyInstance } from "fastify";
import type { Access, DocumentRecord, DocumentState } from "../../domain/document.ts";
import { ORG_DOC_TYPES, type OrgDocType } from "../../domain/formats.ts";
import type { DocumentSortField } from "../../store/documents.ts";
import { coverPath, docPath } from "../document-paths.ts";
import { html, type Html } from "../html.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { noticeBox } from "./app-errors.ts";
import { APP_BASE, sendAppPage } from "./app-layout.ts";
import { failureReason, shortDate, STATE_LABELS } from "./app-words.ts";

export const DOCUMENTS_PAGE_SIZE = 20;
/** The state poll's answer is bounded: a page never shows more. */
const MAX_POLLED = 100;

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
    page: /^[1-9][0-9]{0,6}$/.test(pageText) ? Number(pageText) : 1,
  };
}

function hrefWith(q: DocumentsQuery, page: number): string {
  const p = new URLSearchParams();
  if (q.sort !== SORTS[0]) p.set("sort", q.sort.value);
  if (q.state) p.set("state", q.state);
  if (q.access) p.set("access", q.access);
  if (q.format) p.set("format", q.format);
  if (page > 1) p.set("page", String(page));
  const s = p.toString();
  return `${APP_BASE}/documents${s ? `?${s}` : ""}`;
}

const select = (name: string, label: string, options: ReadonlyArray<readonly [string, string]>, current: string) => html`<div>
<label for="f-${name}">${label}</label>
<select id="f-${name}" name="${name}">${options.map(([v, l]) => html`<option value="${v}"${v === current ? html` selected` : ""}>${l}</option>`)}</select>
</div>`;

function filters(q: DocumentsQuery): Html {
  return html`<form class="filters" method="get" action="${APP_BASE}/documents" aria-label="Sort and filter">
${select("sort", "Sort", SORTS.map((s) => [s.value, s.label] as const), q.sort.value)}
${select("state", "State", STATES, q.state)}
${select("access", "Access", ACCESS, q.access)}
${select("format", "Format", [["", "Any format"], ...ORG_DOC_TYPES.map((t) => [t, t.toUpperCase()] as const)], q.format)}
<button type="submit">Show</button>
</form>`;
}

export function stateCell(doc: DocumentRecord): Html {
  const reason = failureReason(doc);
  return html`<span class="state state-${doc.state}">${STATE_LABELS[doc.state]}${reason !== undefined && html`<span class="state-reason">${reason}</span>`}</span>`;
}

function row(doc: DocumentRecord): Html {
  const editHref = `${APP_BASE}/documents/${doc.documentId}`;
  return html`<li class="doc" data-id="${doc.documentId}" data-state="${doc.state}">
${doc.state === "A" ? html`<img class="cover" src="${coverPath(doc, "small")}" alt="" width="72" height="96" loading="lazy">` : html`<span class="cover no-cover">No cover yet</span>`}
<h2><a href="${editHref}">${doc.title}</a></h2>
<dl>
<div><dt>State</dt><dd>${stateCell(doc)}</dd></div>
<div><dt>Pages</dt><dd data-pages>${doc.pageCount}</dd></div>
<div><dt>Access</dt><dd>${doc.access === "public" ? "Public" : "Private"}</dd></div>
<div><dt>Format</dt><dd>${doc.orgDocType.toUpperCase()}</dd></div>
<div><dt>Published</dt><dd><time datetime="${new Date(doc.publishDate).toISOString()}">${shortDate(doc.publishDate)}</time></dd></div>
</dl>
<p class="doc-actions"><a class="button" href="${editHref}">Edit<span class="sr-only"> ${doc.title}</span></a>
${doc.state === "A" && html` <a class="button" href="${docPath(doc)}">View<span class="sr-only"> ${doc.title}</span></a>`}</p>
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
    sortBy: q.sort.by,
    order: q.sort.order,
    startIndex: (q.page - 1) * DOCUMENTS_PAGE_SIZE,
    pageSize: DOCUMENTS_PAGE_SIZE,
  });
}

export function documentsBody(q: DocumentsQuery, totalCount: number, records: DocumentRecord[], notice: string | undefined): Html {
  const filtered = q.state !== "" || q.access !== "" || q.format !== "";
  return html`<h1>Documents</h1>
${noticeBox(notice)}
${filters(q)}
<p class="count">${totalCount === 1 ? "1 document" : `${totalCount} documents`}${filtered ? " match" : ""}</p>
<p id="live" class="sr-only" aria-live="polite"></p>
${records.length === 0
    ? html`<p>${filtered || q.page > 1 ? "No document here." : html`No document yet. <a href="${APP_BASE}/upload">Upload one</a>.`}</p>`
    : html`<ol class="docs" data-states-url="${APP_BASE}/documents/states.json">${records.map(row)}</ol>`}
${pager(q, totalCount)}`;
}

const NOTICES: Readonly<Record<string, string>> = { deleted: "The document was deleted." };

/** The account's documents (issue 14 item 2): sorted, filtered, paged; states follow live. */
export function registerDocumentsPage(scope: FastifyInstance, ctx: AppContext): void {
  scope.get("/documents", async (req, reply) => {
    const account = accountOf(req);
    const q = documentsQuery(req.query);
    const { totalCount, records } = await documentsPageData(ctx, account.id, q);
    const notice = NOTICES[field(req.query, "done") ?? ""];
    return sendAppPage(ctx, req, reply, { title: "Documents", section: "documents" }, () => documentsBody(q, totalCount, records, notice));
  });

  // What the page's script polls while documents are processing: their states, never cached.
  scope.get("/documents/states.json", async (req, reply) => {
    const account = accountOf(req);
    const ids = (field(req.query, "ids") ?? "").split(",").filter((id) => /^[0-9]{12}-[0-9a-f]{32}$/.test(id)).slice(0, MAX_POLLED);
    const states = [];
    for (const id of new Set(ids)) {
      const doc = await ctx.store.documents.getById(account.id, id);
      if (!doc) continue;
      states.push({
        documentId: doc.documentId, state: doc.state, label: STATE_LABELS[doc.state], reason: failureReason(doc) ?? "",
        pageCount: doc.pageCount, title: doc.title, cover: doc.state === "A" ? coverPath(doc, "small") : "",
      });
    }
    return reply.header("cache-control", "no-store").header("x-content-type-options", "nosniff").send({ states });
  });
}
