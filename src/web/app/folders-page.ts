import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { missing, QuireError, invalid } from "../../domain/errors.ts";
import { readFolderFields } from "../../domain/folders.ts";
import type { FolderRecord } from "../../store/folders.ts";
import { countOf } from "../../domain/counts.ts";
import { publicFolderPath } from "../document-paths.ts";
import { html, type Html } from "../html.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { describeFailure, errorBox, noticeBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";

/** A form's fields as the API's rules read them: empty counts as absent (decisions §4). */
const getter = (body: unknown) => (name: string) => {
  const v = field(body, name);
  return v === "" ? undefined : v;
};

const folderPath = (id: string) => `${APP_BASE}/folders/${encodeURIComponent(id)}`;

function folderForm(csrf: string, action: string, f: { name?: string; description?: string }, submit: string): Html {
  return html`<form class="stack" method="post" action="${action}">${csrfField(csrf)}
<label for="f-name">Name</label>
<input id="f-name" name="folderName" required maxlength="100" value="${f.name ?? ""}">
<label for="f-description">Description</label>
<textarea id="f-description" name="folderDescription" maxlength="1000">${f.description ?? ""}</textarea>
<button type="submit" class="primary">${submit}</button>
</form>`;
}

function listBody(csrf: string, folders: FolderRecord[], error?: string, typed: { name?: string; description?: string } = {}): Html {
  return html`<h1>Folders</h1>
${errorBox(error)}
${folders.length === 0 ? html`<p>No folders yet.</p>` : html`<ul class="folders">${folders.map(
    (f) => html`<li><a href="${folderPath(f.folderId)}">${f.name}</a> <span class="count">${countOf(f.items, "document")}</span>${f.onProfile && html` <span class="count">· on your profile</span>`}${f.description && html`<p class="hint">${f.description}</p>`}</li>`,
  )}</ul>`}
<h2>New folder</h2>
${folderForm(csrf, `${APP_BASE}/folders`, typed, "Create folder")}`;
}

/**
 * The folder's place on the public profile (issue 26 item 9): off until the publisher ticks it,
 * since older folders were made when their names were never shown to anyone.
 */
function profileForm(csrf: string, here: string, f: FolderRecord): Html {
  const address = publicFolderPath(f.username, f.folderId);
  return html`<form class="stack" method="post" action="${here}/profile">${csrfField(csrf)}
<label class="check"><input type="checkbox" name="onProfile" value="1"${f.onProfile ? html` checked` : html``} aria-describedby="f-profile-hint"> Show on my profile</label>
<p class="hint" id="f-profile-hint">${f.onProfile
    ? html`Shown at <a href="${address}">${address}</a>: its name, description and public documents (never private ones).`
    : html`Hidden: nobody else sees this folder or its name. Shown, its name, description and public documents appear on your profile.`}</p>
<button type="submit">Save</button>
</form>`;
}

interface FolderView {
  folder: FolderRecord;
  items: Array<{ bookmarkId: string; title: string; documentId: string }>;
  candidates: Array<{ documentId: string; title: string }>;
  error?: string;
  notice?: string;
}

function folderBody(csrf: string, v: FolderView): Html {
  const f = v.folder;
  const here = folderPath(f.folderId);
  return html`<p><a href="${APP_BASE}/folders">← All folders</a></p>
<h1>${f.name}</h1>
${errorBox(v.error)}${noticeBox(v.notice)}
${f.description && html`<p>${f.description}</p>`}
<h2>Documents in this folder</h2>
${v.items.length === 0 ? html`<p>No published document in this folder yet.</p>` : html`<ol class="folder-docs">${v.items.map(
    (b) => html`<li><a href="${APP_BASE}/documents/${b.documentId}">${b.title}</a>
<form method="post" action="${here}/remove">${csrfField(csrf)}<input type="hidden" name="bookmarkId" value="${b.bookmarkId}"><button type="submit" aria-label="Remove ${b.title} from this folder">Remove</button></form></li>`,
  )}</ol>`}
<h2>Add a document</h2>
${v.candidates.length === 0 ? html`<p>Every published document of yours is in this folder already.</p>` : html`<form class="stack" method="post" action="${here}/add">${csrfField(csrf)}
<fieldset class="folder-candidates"><legend>Tick the documents to add (several at once)</legend>
${v.candidates.map((d) => html`<label class="check"><input type="checkbox" name="documentId" value="${d.documentId}"> ${d.title}</label>`)}
</fieldset>
<button type="submit" class="primary">Add to folder</button>
</form>`}
<h2>Rename or describe</h2>
${folderForm(csrf, `${here}/edit`, { name: f.name, description: f.description }, "Save")}
<h2>On your profile</h2>
${profileForm(csrf, here, f)}
<h2>Delete</h2>
<form method="post" action="${here}/delete" data-confirm="Delete the folder ${f.name}? Its documents stay.">${csrfField(csrf)}
<p class="hint">The documents stay; only the folder goes.</p>
<button type="submit" class="danger">Delete folder</button>
</form>`;
}

/** Documents one "Add to folder" may name. */
const MAX_ADD_AT_ONCE = 1000;

const NOTICES: Record<string, string> = {
  added: "The document was added.", removed: "The document was removed from this folder.", saved: "Saved.", created: "The folder was made.",
  shown: "The folder is shown on your profile.", hidden: "The folder is no longer shown on your profile.",
};

/** Folders (issue 14 item 4): a folder holds bookmarks to documents (decisions §7), as in the API. */
export function registerFoldersPage(scope: FastifyInstance, ctx: AppContext): void {
  const { store } = ctx;
  const allFolders = async (accountId: number) => (await store.folders.listPage(accountId, { sortBy: "name", order: "asc", startIndex: 0, pageSize: 1000 })).items;

  const showFolder = async (req: FastifyRequest, reply: FastifyReply, folderId: string, extra: { error?: string; notice?: string } = {}, status = 200) => {
    const account = accountOf(req);
    const folder = await store.folders.get(account.id, folderId);
    if (!folder) throw invalid("folderId");
    // In the order they were added, as svc.bookmarks.list gives them by default.
    const { items } = await store.bookmarks.listPage(account.id, { scope: { kind: "folder", folderId }, sortBy: "created", order: "asc", startIndex: 0, pageSize: 1000 });
    const inFolder = new Set(items.map((b) => b.documentId));
    const own = await store.documents.list({ accountId: account.id, states: ["A"], sortBy: "title", order: "asc", startIndex: 0, pageSize: 1000 });
    const candidates = own.records.filter((d) => !inFolder.has(d.documentId));
    return sendAppPage(ctx, req, reply, { title: folder.name, section: "folders" }, (csrf) => folderBody(csrf, { folder, items, candidates, ...extra }), status);
  };

  scope.get("/folders", async (req, reply) => {
    const folders = await allFolders(accountOf(req).id);
    return sendAppPage(ctx, req, reply, { title: "Folders", section: "folders" }, (csrf) => listBody(csrf, folders));
  });

  scope.post("/folders", async (req, reply) => {
    const account = accountOf(req);
    const get = getter(req.body);
    try {
      if (get("folderName") === undefined) throw missing("folderName");
      const { name, description } = readFolderFields(get);
      const written = await store.folders.create(account.id, randomUUID(), { name: name!, description: description ?? "" }, Date.now());
      if (!written.ok) throw new QuireError("261");
      return reply.redirect(`${folderPath(written.folder.folderId)}?done=created`, 303);
    } catch (err) {
      if (!(err instanceof QuireError)) throw err;
      const folders = await allFolders(account.id);
      const typed = { name: field(req.body, "folderName"), description: field(req.body, "folderDescription") };
      return sendAppPage(ctx, req, reply, { title: "Folders", section: "folders" }, (csrf) => listBody(csrf, folders, describeFailure(err).text, typed), 400);
    }
  });

  scope.get<{ Params: { id: string } }>("/folders/:id", async (req, reply) => {
    const done = field(req.query, "done") ?? "";
    const many = /^added-([0-9]{1,4})$/.exec(done);
    return showFolder(req, reply, req.params.id, { notice: many ? `${countOf(Number(many[1]), "document")} added.` : NOTICES[done] });
  });

  scope.post<{ Params: { id: string } }>("/folders/:id/edit", async (req, reply) => {
    const account = accountOf(req);
    try {
      const { name, description } = readFolderFields(getter(req.body));
      const written = await store.folders.update(account.id, req.params.id, { name, description }, Date.now());
      if (!written.ok) throw written.reason === "name-taken" ? new QuireError("261") : invalid("folderId");
      return reply.redirect(`${folderPath(req.params.id)}?done=saved`, 303);
    } catch (err) {
      if (!(err instanceof QuireError) || err.field === "folderId") throw err;
      return showFolder(req, reply, req.params.id, { error: describeFailure(err).text }, 400);
    }
  });

  scope.post<{ Params: { id: string } }>("/folders/:id/profile", async (req, reply) => {
    // A ticked box sends onProfile=1; an unticked one sends nothing, which means hidden.
    const onProfile = field(req.body, "onProfile") === "1";
    if (!(await store.folders.setOnProfile(accountOf(req).id, req.params.id, onProfile))) throw invalid("folderId");
    return reply.redirect(`${folderPath(req.params.id)}?done=${onProfile ? "shown" : "hidden"}`, 303);
  });

  scope.post<{ Params: { id: string } }>("/folders/:id/add", async (req, reply) => {
    const account = accountOf(req);
    if (!(await store.folders.get(account.id, req.params.id))) throw invalid("folderId");
    const raw = req.body !== null && typeof req.body === "object" && Object.hasOwn(req.body, "documentId") ? (req.body as Record<string, unknown>).documentId : undefined;
    // Several at once (a checkbox each), at most a page's worth of a big account; none ticked says so.
    const ids = [...new Set((Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string" && v !== ""))];
    if (ids.length === 0) return showFolder(req, reply, req.params.id, { error: "Tick at least one document to add." }, 400);
    if (ids.length > MAX_ADD_AT_ONCE) return showFolder(req, reply, req.params.id, { error: `At most ${MAX_ADD_AT_ONCE} documents can be added at once.` }, 400);
    const { items } = await store.bookmarks.listPage(account.id, { scope: { kind: "folder", folderId: req.params.id }, sortBy: "created", order: "asc", startIndex: 0, pageSize: 10_000 });
    const inFolder = new Set(items.map((b) => b.documentId));
    let added = 0;
    for (const documentId of ids) {
      // As svc.bookmark.add: the account's own document, by name or id; a bookmark at page 1 in this folder.
      const doc = await store.bookmarks.findBookmarkable(account.id, account.username, documentId);
      if (!doc || doc.accountId !== account.id) {
        if (ids.length === 1) throw new QuireError("300");
        continue;
      }
      if (inFolder.has(doc.documentId)) continue;
      inFolder.add(doc.documentId);
      await store.bookmarks.add(account.id, randomUUID(), doc, 1, [req.params.id], Date.now());
      added++;
    }
    return reply.redirect(`${folderPath(req.params.id)}?done=${added === 1 ? "added" : `added-${added}`}`, 303);
  });

  scope.post<{ Params: { id: string } }>("/folders/:id/remove", async (req, reply) => {
    const account = accountOf(req);
    // As svc.bookmark.delete: another account's bookmark is passed over, as if it did not exist.
    await store.bookmarks.deleteMany(account.id, [field(req.body, "bookmarkId") ?? ""]);
    return reply.redirect(`${folderPath(req.params.id)}?done=removed`, 303);
  });

  scope.post<{ Params: { id: string } }>("/folders/:id/delete", async (req, reply) => {
    await store.folders.deleteMany(accountOf(req).id, [req.params.id]);
    return reply.redirect(`${APP_BASE}/folders`, 303);
  });
}
