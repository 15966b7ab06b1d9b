import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { blobKeys } from "../../blobs/blob-keys.ts";
import { formatNamedOtherwise, type DocumentRecord } from "../../domain/document.ts";
import { deleteDocuments, updateDocument } from "../../domain/document-operations.ts";
import { QuireError } from "../../domain/errors.ts";
import type { FolderRecord } from "../../store/folders.ts";
import { readDocumentUpdate } from "../../domain/document-update.ts";
import { coverPath, docPath } from "../document-paths.ts";
import { html } from "../html.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { describeFailure, noticeBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";
import { categoryName, languageName, shortDate, typeName } from "./app-words.ts";
import { changedParams, documentForm, formValues, submittedValues } from "./document-form.ts";
import { retryForm, stateCell } from "./documents-page.ts";
import { registerReplaceFile, replaceFileSection, REPLACE_NOTICES } from "./replace-file-form.ts";

const DOCUMENT_ID_RE = /^[0-9]{12}-[0-9a-f]{32}$/;
type Params = { Params: { documentId: string } };

const docHref = (doc: Pick<DocumentRecord, "documentId">) => `${APP_BASE}/documents/${doc.documentId}`;

/** The signed-in account's document of this id; another account's is as if it did not exist. */
async function ownDocument(ctx: AppContext, req: FastifyRequest<Params>): Promise<DocumentRecord | undefined> {
  const { documentId } = req.params;
  if (!DOCUMENT_ID_RE.test(documentId)) return undefined;
  return ctx.store.documents.getById(accountOf(req).id, documentId);
}

/** The format as detected; a file whose name says another is published as what it is (decisions §5), and the page says so. */
function formatFact(doc: DocumentRecord): string {
  const claimed = formatNamedOtherwise(doc);
  return doc.orgDocType.toUpperCase() + (claimed ? ` (its file name says ${claimed.toUpperCase()})` : "");
}

function notFound(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  return sendAppPage(ctx, req, reply, { title: "Document not found", section: "documents" }, () => html`<h1>Document not found</h1>
<p>This document does not exist, or no longer does. <a href="${APP_BASE}/documents">Back to your documents</a>.</p>`, 404);
}

/**
 * The document's folders, a block of its own beside the fields' form (issue 26 item 9): tick the
 * folders it is in. Folders hold bookmarks (decisions §7), so this is its own form and POST.
 */
function folderBlock(href: string, csrf: string, folders: FolderRecord[], inFolders: readonly string[], saved = false) {
  if (folders.length === 0) return html`<fieldset class="doc-folders"><legend>Folders</legend><p>No folders yet. <a href="${APP_BASE}/folders">Make one</a>.</p></fieldset>`;
  const chosen = new Set(inFolders);
  return html`<form method="post" action="${href}/folders" class="doc-folders-form" id="folders">${csrfField(csrf)}
<fieldset class="doc-folders"><legend>Folders</legend>
${saved && html`<p class="message notice" role="status">Saved.</p>`}
<p class="hint">A folder shows the document once it is published.</p>
${folders.map((f) => html`<label class="check"><input type="checkbox" name="folderIds" value="${f.folderId}"${chosen.has(f.folderId) ? html` checked` : ""}> ${f.name}</label>`)}
<button type="submit">Save folders</button>
</fieldset>
</form>`;
}

/** The account's folders, and those of them holding this document. */
async function folderFacts(ctx: AppContext, accountId: number, documentId: string) {
  const [folders, inFolders] = await Promise.all([
    ctx.store.folders.listPage(accountId, { sortBy: "name", order: "asc", startIndex: 0, pageSize: 1000 }).then((p) => p.items),
    ctx.store.bookmarks.foldersOfDocument(accountId, documentId),
  ]);
  return { folders, inFolders };
}

async function documentView(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, doc: DocumentRecord, form: Parameters<typeof documentForm>[2], notice?: string, status = 200, replaceError?: string) {
  // Replace file (issue 26 item 5): its own block, below the edit form (src/web/app/replace-file-form.ts).
  const replacement = await ctx.store.replacements.get(doc.documentId);
  // Folders (issue 26 item 9): a block of their own too.
  const { folders, inFolders } = await folderFacts(ctx, accountOf(req).id, doc.documentId);
  return sendAppPage(ctx, req, reply, { title: doc.title, section: "documents" }, (csrf) => html`<p><a href="${APP_BASE}/documents">← Documents</a></p>
<h1>${doc.title}</h1>
${noticeBox(notice)}
<div class="doc-edit">
<div class="side">
${doc.state === "A" ? html`<img src="${coverPath(doc, "medium")}" alt="Cover of ${doc.title}">` : ""}
<ul class="links">
${doc.state === "A" && html`<li><a href="${docPath(doc)}">Open the reader page</a></li>`}
${doc.state === "A" && html`<li><a href="${docHref(doc)}/share">Share: link, embed code, preview</a></li>`}
<li><a href="${docHref(doc)}/original">Download the original</a></li>
</ul>
<dl class="facts">
<dt>State</dt><dd>${stateCell(doc)}${doc.state === "F" && retryForm(doc, csrf, "document")}</dd>
<dt>Pages</dt><dd>${doc.pageCount}</dd>
<dt>Format</dt><dd>${formatFact(doc)}</dd>
<dt>File</dt><dd>${doc.orgDocName}</dd>
<dt>Language</dt><dd>${languageName(doc.language)}</dd>
<dt>Category</dt><dd>${categoryName(doc.category)}</dd>
<dt>Type</dt><dd>${typeName(doc.type)}</dd>
<dt>Uploaded</dt><dd>${shortDate(doc.createdAt)}</dd>
<dt>Document id</dt><dd><code>${doc.documentId}</code></dd>
</dl>
</div>
<div>
${documentForm(docHref(doc), csrf, form)}
${folderBlock(docHref(doc), csrf, folders, inFolders, notice === NOTICES.folders)}
${replaceFileSection(doc, replacement, csrf, ctx.config.maxUploadBytes, replaceError)}
<fieldset class="danger-zone">
<legend>Delete</legend>
<p>Deleting removes the document, its pages and its original file for good.</p>
<a class="button danger" href="${docHref(doc)}/delete">Delete this document…</a>
</fieldset>
</div>
</div>`, status);
}

const NOTICES: Readonly<Record<string, string>> = {
  saved: "Your changes were saved.", folders: "The document's folders were saved.", unchanged: "Nothing was changed.",
  retried: "The document is being converted again.", ...REPLACE_NOTICES,
};

/** One document (issue 14 item 2): every field the API lets its owner change, delete with a confirmation. */
export function registerDocumentPage(scope: FastifyInstance, ctx: AppContext): void {
  scope.get<Params>("/documents/:documentId", async (req, reply) => {
    const doc = await ownDocument(ctx, req);
    if (!doc) return notFound(ctx, req, reply);
    return documentView(ctx, req, reply, doc, { values: formValues(doc) }, NOTICES[field(req.query, "done") ?? ""]);
  });

  scope.post<Params>("/documents/:documentId/folders", async (req, reply) => {
    const doc = await ownDocument(ctx, req);
    if (!doc) return notFound(ctx, req, reply);
    const account = accountOf(req);
    const raw = req.body !== null && typeof req.body === "object" && Object.hasOwn(req.body, "folderIds") ? (req.body as Record<string, unknown>).folderIds : [];
    const sent = [...new Set((Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string"))];
    // Only the account's own folders (another's id refuses the whole form, as svc.bookmark.add does).
    if (sent.length > 1000 || !(await ctx.store.folders.ownsAll(account.id, sent))) throw new QuireError("201", "folderIds");
    const target = await ctx.store.bookmarks.findBookmarkable(account.id, account.username, doc.documentId);
    if (!target || target.accountId !== account.id) return notFound(ctx, req, reply);
    await ctx.store.bookmarks.setDocumentFolders(account.id, target, sent, randomUUID, Date.now());
    return reply.redirect(`${docHref(doc)}?done=folders#folders`, 303);
  });

  scope.post<Params>("/documents/:documentId", async (req, reply) => {
    const doc = await ownDocument(ctx, req);
    if (!doc) return notFound(ctx, req, reply);
    const sent = submittedValues(req.body);
    try {
      // The API's own reading of the parameters and its own update: the same rules, the same errors.
      const { name, changes } = readDocumentUpdate(changedParams(formValues(doc), sent, doc.documentId));
      if (Object.keys(changes).length === 0) return reply.redirect(`${docHref(doc)}?done=unchanged`, 303);
      await updateDocument(ctx.store.documents, accountOf(req).id, name, changes, Date.now());
      return reply.redirect(`${docHref(doc)}?done=saved`, 303);
    } catch (err) {
      const failure = describeFailure(err);
      if (failure.field === undefined) req.log.error({ err }, "document update from the app failed");
      return documentView(ctx, req, reply, doc, { values: sent, error: failure }, undefined, failure.field === undefined ? 500 : 400);
    }
  });

  // Replace file (issue 26 item 5): the form's route, with this page to show its errors on.
  registerReplaceFile(scope, ctx, {
    ownDocument: (req) => ownDocument(ctx, req),
    notFound: async (req, reply) => notFound(ctx, req, reply),
    showError: async (req, reply, doc, error, status) => documentView(ctx, req, reply, doc, { values: formValues(doc) }, undefined, status, error),
  });

  scope.get<Params>("/documents/:documentId/delete", async (req, reply) => {
    const doc = await ownDocument(ctx, req);
    if (!doc) return notFound(ctx, req, reply);
    return sendAppPage(ctx, req, reply, { title: `Delete ${doc.title}`, section: "documents" }, (csrf) => html`<h1>Delete “${doc.title}”?</h1>
<p>The document, its pages and its original file are removed for good. Links to it stop working.</p>
<form method="post" action="${docHref(doc)}/delete" class="stack">
${csrfField(csrf)}
<button type="submit" class="danger">Delete for good</button>
</form>
<p><a href="${docHref(doc)}">Cancel, keep it</a></p>`);
  });

  scope.post<Params>("/documents/:documentId/delete", async (req, reply) => {
    const doc = await ownDocument(ctx, req);
    if (!doc) return notFound(ctx, req, reply);
    await deleteDocuments(
      ctx.store.documents,
      async (blobId) => void (await ctx.blobs.deletePrefix(blobKeys.prefix(blobId))),
      (err, documentId) => req.log.error({ err, documentId }, "removing a deleted document's files failed"),
      accountOf(req).id,
      [doc.documentId],
      Date.now(),
    );
    return reply.redirect(`${APP_BASE}/documents?done=deleted`, 303);
  });

  // The owner's own file, whatever `downloadable` says (that setting is about readers).
  scope.get<Params>("/documents/:documentId/original", async (req, reply) => {
    const doc = await ownDocument(ctx, req);
    if (!doc) return notFound(ctx, req, reply);
    let original: Readable;
    try {
      original = await ctx.blobs.get(blobKeys.original(doc.blobId));
    } catch {
      return notFound(ctx, req, reply);
    }
    const fileName = doc.orgDocName.replace(/^.*[\\/]/, "") || `${doc.name}.${doc.orgDocType}`;
    const ascii = fileName.replace(/[^\x20-\x7E]|["\\]/g, "_");
    return reply
      .header("content-disposition", `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`)
      .header("cache-control", "private, no-store")
      .header("x-content-type-options", "nosniff")
      .header("content-security-policy", "default-src 'none'; sandbox")
      .type("application/octet-stream")
      .send(original);
  });
}
