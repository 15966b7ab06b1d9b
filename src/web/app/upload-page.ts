import { rm } from "node:fs/promises";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { CATEGORIES, DOCUMENT_TYPES } from "../../domain/codes.ts";
import { formatNamedOtherwise, type DocumentRecord } from "../../domain/document.ts";
import type { ParamGetter } from "../../domain/document-options.ts";
import { invalid, missing, QuireError } from "../../domain/errors.ts";
import { createDocument, readUploadOptions, refusalAtLimit } from "../../uploads/new-document.ts";
import { diskFullRefusalOf } from "../../uploads/disk-guard.ts";
import { readUpload, type FieldSink, type SpooledFile } from "../../uploads/upload-reader.ts";
import { fileSource, urlSource, type UploadSource } from "../../uploads/upload-sources.ts";
import type { FolderRecord } from "../../store/folders.ts";
import { html, type Html } from "../html.ts";
import { accountOf, field, type AppContext, type SignedInAccount } from "./app-context.ts";
import { describeFailure, errorBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";

/** The fields of the batch: the upload options people set in the app (the API takes a few more). */
const BATCH_FIELDS = ["title", "tags", "description", "access", "category", "type", "folderIds"] as const;
type BatchValues = Partial<Record<(typeof BATCH_FIELDS)[number], string>>;

/**
 * The fields of one upload form as they stream in: as the API's, a name sent twice is 201 on it,
 * but for `folderIds`, which a form sends once per ticked folder. Empty counts as absent (§4).
 */
class FormFields implements FieldSink {
  private readonly values = new Map<string, string>();
  readonly get: ParamGetter = (name) => {
    const v = this.values.get(name);
    return v === "" ? undefined : v;
  };
  add(name: string, value: string): void {
    const before = this.values.get(name);
    if (before === undefined) this.values.set(name, value);
    else if (name === "folderIds") this.values.set(name, `${before},${value}`);
    else throw invalid(name);
  }
}

/** A form-encoded body's fields the same way (repeated `folderIds` joined, empty as absent). */
function bodyGetter(body: unknown): ParamGetter {
  return (name) => {
    const raw = body !== null && typeof body === "object" && Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined;
    const value = name === "folderIds" && Array.isArray(raw) ? raw.filter((v) => typeof v === "string").join(",") : field(body, name);
    return value === "" ? undefined : value;
  };
}

/** Sizes as people read them. */
export function formatSize(bytes: number): string {
  const MiB = 1024 * 1024;
  if (bytes >= MiB) return `${Math.round((bytes / MiB) * 10) / 10} MiB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KiB`;
}

/** A refusal in words; a file over the limit says what the limit is. */
function refusalText(err: unknown, maxBytes: number): { text: string; field: string | undefined } {
  if (err instanceof QuireError && err.code === "205") return { text: `The file is larger than the ${formatSize(maxBytes)} this server accepts.`, field: "file" };
  if (diskFullRefusalOf(err)) return { text: "The server's disk is full just now, so nothing was uploaded. Please try again later.", field: undefined };
  return describeFailure(err);
}

const wantsJson = (req: FastifyRequest) => (req.headers.accept ?? "").includes("application/json");

/**
 * What the page's script needs of a new document; `contentNote` when its name says another format
 * than its content, `earlier` when the account uploaded the same content before (a hint: it is kept all the same).
 */
function created(doc: DocumentRecord, earlier?: { documentId: string; title: string }) {
  const claimed = formatNamedOtherwise(doc);
  return {
    documentId: doc.documentId,
    title: doc.title,
    state: doc.state,
    href: `${APP_BASE}/documents/${doc.documentId}`,
    ...(claimed ? { contentNote: `It is a ${doc.orgDocType.toUpperCase()} file, whatever its name says (${claimed.toUpperCase()}), and is published as one.` } : {}),
    ...(earlier ? { earlier: { title: earlier.title, href: `${APP_BASE}/documents/${earlier.documentId}` } } : {}),
  };
}

/** A file of 0 bytes is no document of any format: said as such, not as a format Quire cannot read (still error 201 on `file`). */
const EMPTY_FILE = "The file is empty (0 bytes): there is nothing to publish.";

function options(table: Readonly<Record<string, string>>, chosen: string | undefined): Html[] {
  return Object.entries(table).map(([code, label]) => html`<option value="${code}"${code === (chosen ?? "000000") ? html` selected` : ""}>${label}</option>`);
}

function batchFieldset(folders: FolderRecord[], v: BatchValues): Html {
  const chosen = new Set((v.folderIds ?? "").split(","));
  return html`<fieldset class="batch"><legend>Details for every document of this batch (optional)</legend>
<div class="stack">
<label for="u-title">Title</label>
<p class="hint" id="u-title-hint">Left empty, each document is titled after its file name.</p>
<input id="u-title" name="title" maxlength="500" aria-describedby="u-title-hint" value="${v.title ?? ""}">
<label for="u-tags">Tags</label>
<input id="u-tags" name="tags" aria-describedby="u-tags-hint" value="${v.tags ?? ""}">
<p class="hint" id="u-tags-hint">Separated by commas.</p>
<label for="u-description">Description</label>
<textarea id="u-description" name="description" maxlength="1000">${v.description ?? ""}</textarea>
<label for="u-category">Category</label>
<select id="u-category" name="category">${options(CATEGORIES, v.category)}</select>
<label for="u-type">Type</label>
<select id="u-type" name="type">${options(DOCUMENT_TYPES, v.type)}</select>
</div>
<fieldset><legend>Access</legend>
<label class="check"><input type="radio" name="access" value="public"${v.access !== "private" ? html` checked` : ""}> Public: listed on your profile</label>
<label class="check"><input type="radio" name="access" value="private"${v.access === "private" ? html` checked` : ""}> Private: only people with its address</label>
</fieldset>
${folders.length > 0 && html`<fieldset><legend>Folders</legend>
<p class="hint">Each document is placed in these folders once it is published.</p>
${folders.map((f) => html`<label class="check"><input type="checkbox" name="folderIds" value="${f.folderId}"${chosen.has(f.folderId) ? html` checked` : ""}> ${f.name}</label>`)}
</fieldset>`}
</fieldset>`;
}

interface UploadView {
  folders: FolderRecord[];
  values: BatchValues & { slurpUrl?: string };
  error?: string;
  maxBytes: number;
}

function uploadBody(ctx: AppContext, csrf: string, v: UploadView): Html {
  return html`<h1>Upload</h1>
${errorBox(v.error)}
<p class="hint">PDF, office documents (Word, Excel, PowerPoint, OpenDocument, WordPerfect, RTF and older formats), plain text and images (JPEG, PNG, TIFF, GIF, BMP, WebP), up to ${formatSize(v.maxBytes)} each.</p>
<form id="upload-form" class="upload" method="post" action="${APP_BASE}/upload-url" data-upload-url="${APP_BASE}/upload" data-url-upload-url="${APP_BASE}/upload-url" data-states-url="${APP_BASE}/documents/states.json" data-max-bytes="${v.maxBytes}" data-max-size="${formatSize(v.maxBytes)}">
${csrfField(csrf)}
<div class="drop js-only" data-role="drop">
<p class="drop-text"><span aria-hidden="true">⬆</span> Drop files here, or</p>
<button type="button" class="primary" data-role="pick">Choose files</button>
<input id="u-files" class="sr-only" type="file" multiple tabindex="-1" aria-hidden="true" data-role="files">
</div>
<noscript><p class="message error">Uploading files needs JavaScript in this browser. A document at a web address can be uploaded without it, below.</p></noscript>
<ol class="uploads" data-role="list" aria-label="Files of this batch"></ol>
<div class="stack">
<label for="u-url">Or a document at a web address</label>
<input id="u-url" name="slurpUrl" type="url" inputmode="url" placeholder="https://example.com/report.pdf" value="${v.values.slurpUrl ?? ""}">
</div>
${batchFieldset(v.folders, v.values)}
<div class="upload-bar-actions">
<p class="upload-chosen" role="status" aria-live="polite" data-role="announce"><span class="js-only">No files chosen yet.</span></p>
<button type="submit" class="primary" data-role="submit">Upload</button>
</div>
</form>`;
}

async function foldersOf(ctx: AppContext, accountId: number): Promise<FolderRecord[]> {
  return (await ctx.store.folders.listPage(accountId, { sortBy: "name", order: "asc", startIndex: 0, pageSize: 1000 })).items;
}

function newDocument(ctx: AppContext, req: FastifyRequest, account: SignedInAccount, source: UploadSource, get: ParamGetter, spooledPath?: string) {
  return readUploadOptions(get, ctx.store, account.id).then((options) =>
    createDocument(ctx, { uploader: { accountId: account.id, username: account.username }, source, options, spooledPath, now: Date.now(), requestId: req.id }),
  );
}

/** The upload page (issue 14 item 3): files by drag and drop or picker, each on its own request, and web addresses. */
export function registerUploadPage(scope: FastifyInstance, ctx: AppContext): void {
  const maxBytes = ctx.config.maxUploadBytes;

  scope.get("/upload", async (req, reply) => {
    const folders = await foldersOf(ctx, accountOf(req).id);
    return sendAppPage(ctx, req, reply, { title: "Upload", section: "upload", scripts: [ctx.assets.appUploadJs] }, (csrf) => uploadBody(ctx, csrf, { folders, values: {}, maxBytes }));
  });

  // One file per request (the page's script sends each with its own progress), streamed through the API's own reader and limits.
  scope.post("/upload", async (req, reply) => {
    const account = accountOf(req);
    const fields = new FormFields();
    let file: SpooledFile | undefined;
    try {
      file = await readUpload(req.raw, fields, {
        maxBytes,
        tempPath: () => ctx.spool.tempPath(),
        beforeFile: async () => {},
        onLimit: () => refusalAtLimit(fields.get, ctx.store, account.id),
        digest: "sha256",
      });
      if (file === undefined) throw missing("file");
      const sha256 = file.sha256;
      const doc = await newDocument(ctx, req, account, await fileSource(file), fields.get, file.path);
      let earlier: { documentId: string; title: string } | undefined;
      if (sha256 !== undefined) {
        earlier = await ctx.store.uploadChecksums.earlierOf(account.id, sha256, doc.documentId);
        await ctx.store.uploadChecksums.record(account.id, doc.documentId, sha256);
      }
      return reply.code(201).header("cache-control", "no-store").send({ document: created(doc, earlier) });
    } catch (caught) {
      const diskFull = diskFullRefusalOf(caught);
      const err = diskFull ?? caught;
      if (!(err instanceof QuireError)) {
        req.log.error({ err }, "app upload failed");
        // The socket tells whether the person cancelled: `req.raw.destroyed` is true once the body is read.
        if (req.raw.socket?.destroyed ?? true) return reply;
      }
      // Refused before its end: say so, then close, rather than read the rest of it.
      if (!req.raw.complete) reply.header("connection", "close");
      const empty = err instanceof QuireError && err.code === "201" && err.field === "file" && file?.size === 0;
      const { text, field: name } = empty ? { text: EMPTY_FILE, field: "file" } : refusalText(err, maxBytes);
      const status = diskFull ? 503 : err instanceof QuireError ? (err.code === "205" ? 413 : 400) : 500;
      return reply.code(status).header("cache-control", "no-store").send({ error: text, field: name });
    } finally {
      if (file) await rm(file.path, { force: true });
    }
  });

  // A web address: fetched later by the worker, like the API's url_upload. Works without script.
  scope.post("/upload-url", async (req, reply) => {
    const account = accountOf(req);
    const get = bodyGetter(req.body);
    try {
      const slurpUrl = get("slurpUrl");
      if (slurpUrl === undefined) throw missing("slurpUrl");
      const doc = await newDocument(ctx, req, account, urlSource(slurpUrl), get);
      if (wantsJson(req)) return reply.code(201).header("cache-control", "no-store").send({ document: created(doc) });
      return reply.redirect(`${APP_BASE}/documents/${doc.documentId}`, 303);
    } catch (err) {
      if (!(err instanceof QuireError)) throw err;
      const { text, field: name } = describeFailure(err);
      if (wantsJson(req)) return reply.code(400).header("cache-control", "no-store").send({ error: text, field: name });
      const values = Object.fromEntries([...BATCH_FIELDS, "slurpUrl"].map((k) => [k, get(k)]));
      const folders = await foldersOf(ctx, account.id);
      return sendAppPage(ctx, req, reply, { title: "Upload", section: "upload", scripts: [ctx.assets.appUploadJs] }, (csrf) => uploadBody(ctx, csrf, { folders, values, error: text, maxBytes }), 400);
    }
  });
}
