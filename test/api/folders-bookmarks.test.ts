import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import { type Caller, getNormal, type Params, postNormal, type RawResponse, sign } from "../helpers/api-client.ts";
import { type Format, parseXml, readJson } from "../helpers/api-answers.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * svc.folder.* / svc.folders.list / svc.bookmark.* / svc.bookmarks.list (decisions §7, §8, §9)
 * over a real server, signatures from the independent signer, answers read in both formats.
 */

const MESSAGES: Record<string, string> = {
  "200": "Required field is missing",
  "201": "Invalid field format",
  "261": "Folder name exists for user",
  "300": "Document not found",
  "311": "Page not found",
};
const FORMATS = ["xml", "json"] as const;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DATE_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Item = Record<string, unknown>;
interface Result { totalCount: number; startIndex: number; pageSize: number; more: boolean; items: Item[] }
interface Answer { stat: string; error?: { code: string; message: string; field?: string }; item?: Item; result?: Result; empty: boolean }

/** XML and JSON read into one shape: numbers and booleans typed as JSON types them, lists as arrays. */
function readAnswer(res: RawResponse, format: Format, itemTag: string): Answer {
  assert.equal(res.status, 200);
  assert.equal(res.headers["cache-control"], "no-store");
  if (format === "json") {
    assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
    const rsp = (JSON.parse(res.body) as { rsp: { stat: string; _content?: Record<string, unknown> } }).rsp;
    const c = rsp._content;
    if (c === undefined) return { stat: rsp.stat, empty: true };
    assert.deepEqual(Object.keys(rsp), ["_content", "stat"]);
    if (c.error) return { stat: rsp.stat, error: c.error as Answer["error"], empty: false };
    if (c.result) {
      const r = c.result as Omit<Result, "items"> & { _content: Array<Record<string, Item>> };
      const items = r._content.map((entry) => {
        assert.deepEqual(Object.keys(entry), [itemTag]);
        return entry[itemTag]!;
      });
      return { stat: rsp.stat, result: { totalCount: r.totalCount, startIndex: r.startIndex, pageSize: r.pageSize, more: r.more, items }, empty: false };
    }
    return { stat: rsp.stat, item: c[itemTag] as Item, empty: false };
  }
  assert.equal(res.headers["content-type"], "text/xml; charset=utf-8");
  const rsp = parseXml(res.body).rsp as Record<string, unknown>;
  const stat = rsp.stat as string;
  if (rsp.error) return { stat, error: rsp.error as Answer["error"], empty: false };
  const typed = (raw: Record<string, unknown>): Item => {
    const out: Item = {};
    for (const [k, v] of Object.entries(raw)) {
      if (k === "folders") out[k] = v === "" ? [] : ((v as { folder?: Array<{ id: string }> }).folder ?? []).map((f) => f.id);
      else if (["items", "ep", "page"].includes(k)) out[k] = Number(v);
      else out[k] = v;
    }
    // the parser lists child elements before attributes; the answer writes folders last
    if ("folders" in out) {
      const folders = out.folders;
      delete out.folders;
      out.folders = folders;
    }
    return out;
  };
  const result = rsp.result as Record<string, unknown> | undefined;
  if (result) {
    const raw = result[itemTag];
    const list = (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) as Array<Record<string, unknown>>;
    return {
      stat,
      result: {
        totalCount: Number(result.totalCount), startIndex: Number(result.startIndex), pageSize: Number(result.pageSize),
        more: result.more === "true", items: list.map(typed),
      },
      empty: false,
    };
  }
  const item = rsp[itemTag] as Array<Record<string, unknown>> | Record<string, unknown> | undefined;
  if (item === undefined) return { stat, empty: Object.keys(rsp).length === 1 };
  return { stat, item: typed(Array.isArray(item) ? item[0]! : item), empty: false };
}

let server: TestServer;
let me: Caller & { accountId: number; username: string };
let other: Caller & { accountId: number; username: string };

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "",
  language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
  publishDate: undefined, folderIds: [],
};

/** A document put straight into the store, then moved to `state` without any conversion. */
async function makeDoc(owner: typeof me, name: string, state: "P" | "A" | "F", extra: Partial<DocumentOptions> = {}, pageCount = 3) {
  const now = Date.now();
  const doc = buildNewDocument(
    newDocumentIds(now),
    { accountId: owner.accountId, username: owner.username, origin: "apiupload", orgDocType: "pdf", orgDocName: `${name}.pdf`, defaultTitle: `Title ${name}`, slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    { ...OPTIONS, name, description: `About ${name}`, ...extra },
    now,
  );
  const docs = server.services.store.documents;
  await docs.insertWithJob(doc, "convert-document");
  if (state === "A") assert.ok(await docs.markActive(doc.documentId, { pageCount, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, now));
  if (state === "F") assert.ok(await docs.markFailed(doc.documentId, 3, "corrupt", now));
  return doc;
}

async function callerFor(username: string, creds?: { apiKey: string; apiSecret: string }) {
  const c = creds ?? (await createAccount(server.services.store, username));
  const owner = await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey);
  return { server, apiKey: c.apiKey, apiSecret: c.apiSecret, accountId: owner!.accountId, username };
}

function call(c: Caller, action: string, params: Params, format: Format = "json", method: "GET" | "POST" = "POST"): Promise<RawResponse> {
  const signed = sign({ action: `svc.${action}`, apiKey: c.apiKey, format, ...params }, c.apiSecret);
  return method === "GET" ? getNormal(c, signed) : postNormal(c, signed);
}

async function ok(c: Caller, action: string, params: Params, tag: string, format: Format = "json"): Promise<Answer> {
  const res = await call(c, action, params, format);
  const a = readAnswer(res, format, tag);
  assert.equal(a.stat, "ok", res.body);
  return a;
}

async function fails(c: Caller, action: string, params: Params, code: string, field: string | undefined, format: Format = "json"): Promise<void> {
  const res = await call(c, action, params, format);
  const a = readAnswer(res, format, "x");
  assert.equal(a.stat, "fail", res.body);
  assert.equal(a.error?.code, code, res.body);
  assert.equal(a.error?.message, MESSAGES[code], res.body);
  assert.equal(a.error?.field, field, res.body);
}

const addFolder = async (c: Caller, name: string, description?: string) =>
  (await ok(c, "folder.add", { folderName: name, ...(description !== undefined ? { folderDescription: description } : {}) }, "folder")).item!;
const listFolders = async (c: Caller, params: Params = {}, format: Format = "json") => (await ok(c, "folders.list", params, "folder", format)).result!;
const listBookmarks = async (c: Caller, params: Params = {}, format: Format = "json") => (await ok(c, "bookmarks.list", params, "bookmark", format)).result!;
const addBookmark = async (c: Caller, params: Params, format: Format = "json") => (await ok(c, "bookmark.add", params, "bookmark", format)).item!;

before(async () => {
  server = await startTestServer();
  me = await callerFor("tester", server.account);
  other = await callerFor("other");
});
after(() => server.close());

describe("svc.folder.add", () => {
  for (const format of FORMATS) {
    test(`${format}: answers the folder with every field`, async () => {
      const before = Date.now();
      const f = (await ok(me, "folder.add", { folderName: `Shape ${format}`, folderDescription: "Some <things> & \"more\"" }, "folder", format)).item!;
      assert.deepEqual(Object.keys(f), ["folderId", "username", "name", "description", "items", "created", "ep"]);
      assert.match(String(f.folderId), UUID_V4);
      assert.equal(f.username, "tester");
      assert.equal(f.name, `Shape ${format}`);
      assert.equal(f.description, "Some <things> & \"more\"");
      assert.equal(f.items, 0);
      assert.match(String(f.created), DATE_MS);
      assert.ok(Date.parse(String(f.created)) >= before - 1000);
      assert.equal(f.ep, Math.floor(Date.parse(String(f.created)) / 1000));
    });

    test(`${format}: folderName missing or empty is 200; beyond 100 characters 201; description beyond 1000 is 201`, async () => {
      await fails(me, "folder.add", {}, "200", "folderName", format);
      await fails(me, "folder.add", { folderName: "" }, "200", "folderName", format);
      await fails(me, "folder.add", { folderDescription: "x".repeat(1001) }, "200", "folderName", format);
      await fails(me, "folder.add", { folderName: "n".repeat(101) }, "201", "folderName", format);
      await fails(me, "folder.add", { folderName: "bad\u0001" }, "201", "folderName", format);
      await fails(me, "folder.add", { folderName: `ok ${format}`, folderDescription: "x".repeat(1001) }, "201", "folderDescription", format);
      await fails(me, "folder.add", { folderName: `ok ${format}`, format: "yaml" }, "201", "format", "xml");
    });
  }

  test("1 and 100 characters (counted as characters) are accepted; empty description answers empty", async () => {
    assert.equal((await addFolder(me, "a")).name, "a");
    const long = "\u{1F600}".repeat(100);
    assert.equal((await addFolder(me, long, "d".repeat(1000))).name, long);
    assert.equal((await addFolder(me, "no description", "")).description, "");
  });

  test("a name the account already uses is 261 (also over GET, XML); another account may use it", async () => {
    await addFolder(me, "Taken");
    await fails(me, "folder.add", { folderName: "Taken" }, "261", undefined);
    const res = await call(me, "folder.add", { folderName: "Taken" }, "xml", "GET");
    const a = readAnswer(res, "xml", "folder");
    assert.equal(a.error?.code, "261");
    assert.equal(a.error?.field, undefined);
    assert.equal((await addFolder(other, "Taken")).username, "other");
    // names are exact: another case is another name
    assert.equal((await addFolder(me, "taken")).name, "taken");
  });
});

describe("svc.folder.update", () => {
  for (const format of FORMATS) {
    test(`${format}: folderId missing is 200, unknown or another account's is 201 before anything else`, async () => {
      await fails(me, "folder.update", { folderName: "x" }, "200", "folderId", format);
      await fails(me, "folder.update", { folderId: "" }, "200", "folderId", format);
      await fails(me, "folder.update", { folderId: "00000000-0000-4000-8000-000000000000", folderName: "n".repeat(101) }, "201", "folderId", format);
      const theirs = await addFolder(other, `theirs ${format}`);
      await fails(me, "folder.update", { folderId: String(theirs.folderId), folderName: "mine now" }, "201", "folderId", format);
      const after = (await listFolders(other)).items.find((f) => f.folderId === theirs.folderId)!;
      assert.equal(after.name, `theirs ${format}`);
    });
  }

  test("omitted fields stay; given ones change; bad ones are 201; a taken name is 261, its own name is fine", async () => {
    const f = await addFolder(me, "Up 1", "first");
    const id = String(f.folderId);
    assert.deepEqual((await ok(me, "folder.update", { folderId: id }, "folder")).item, f);
    const renamed = (await ok(me, "folder.update", { folderId: id, folderName: "Up 2" }, "folder")).item!;
    assert.equal(renamed.name, "Up 2");
    assert.equal(renamed.description, "first");
    assert.equal(renamed.created, f.created);
    const described = (await ok(me, "folder.update", { folderId: id, folderDescription: "second", folderName: "" }, "folder", "xml")).item!;
    assert.equal(described.name, "Up 2");
    assert.equal(described.description, "second");
    await fails(me, "folder.update", { folderId: id, folderName: "n".repeat(101) }, "201", "folderName");
    await fails(me, "folder.update", { folderId: id, folderDescription: "d".repeat(1001) }, "201", "folderDescription");
    await addFolder(me, "Up other");
    await fails(me, "folder.update", { folderId: id, folderName: "Up other" }, "261", undefined);
    assert.equal((await ok(me, "folder.update", { folderId: id, folderName: "Up 2" }, "folder")).item!.name, "Up 2");
  });
});

describe("svc.folders.list", () => {
  let lister: typeof me;
  before(async () => {
    lister = await callerFor("lister");
    for (const name of ["charlie", "alpha", "Bravo", "delta", "echo"]) await addFolder(lister, name);
    await addFolder(other, "not listed for lister");
  });

  for (const format of FORMATS) {
    test(`${format}: the result list, default order of creation, only the account's folders`, async () => {
      const r = await listFolders(lister, {}, format);
      assert.equal(r.totalCount, 5);
      assert.equal(r.startIndex, 0);
      assert.equal(r.pageSize, 10);
      assert.equal(r.more, false);
      assert.deepEqual(r.items.map((f) => f.name), ["charlie", "alpha", "Bravo", "delta", "echo"]);
      assert.ok(r.items.every((f) => f.username === "lister"));
    });
  }

  test("sorted by name (code point order) and created, asc and desc are exact reverses", async () => {
    const names = async (p: Params) => (await listFolders(lister, p)).items.map((f) => f.name);
    assert.deepEqual(await names({ folderSortBy: "name" }), ["Bravo", "alpha", "charlie", "delta", "echo"]);
    assert.deepEqual(await names({ folderSortBy: "name", resultOrder: "desc" }), ["echo", "delta", "charlie", "alpha", "Bravo"]);
    assert.deepEqual(await names({ folderSortBy: "created", resultOrder: "desc" }), ["echo", "delta", "Bravo", "alpha", "charlie"]);
    // ties (all have 0 items) broken by id, so desc is asc reversed
    const asc = (await listFolders(lister, { folderSortBy: "items" })).items.map((f) => f.folderId);
    const desc = (await listFolders(lister, { folderSortBy: "items", resultOrder: "desc" })).items.map((f) => f.folderId);
    assert.deepEqual(desc, [...asc].reverse());
    assert.deepEqual(asc, [...asc].sort());
  });

  for (const format of FORMATS) {
    test(`${format}: paging edges and bad values`, async () => {
      let r = await listFolders(lister, { pageSize: "2", startIndex: "1" }, format);
      assert.deepEqual([r.totalCount, r.startIndex, r.pageSize, r.more, r.items.length], [5, 1, 2, true, 2]);
      r = await listFolders(lister, { pageSize: "2", startIndex: "3" }, format);
      assert.deepEqual([r.more, r.items.map((f) => f.name)], [false, ["delta", "echo"]]);
      r = await listFolders(lister, { pageSize: "0" }, format);
      assert.deepEqual([r.totalCount, r.pageSize, r.more, r.items.length], [5, 0, true, 0]);
      r = await listFolders(lister, { startIndex: "5" }, format);
      assert.deepEqual([r.totalCount, r.more, r.items.length], [5, false, 0]);
      r = await listFolders(lister, { pageSize: "100", startIndex: "99" }, format);
      assert.deepEqual([r.pageSize, r.startIndex, r.items.length], [100, 99, 0]);
      await fails(lister, "folders.list", { folderSortBy: "title" }, "201", "folderSortBy", format);
      await fails(lister, "folders.list", { resultOrder: "up" }, "201", "resultOrder", format);
      await fails(lister, "folders.list", { startIndex: "-1" }, "201", "startIndex", format);
      await fails(lister, "folders.list", { startIndex: "1.5" }, "201", "startIndex", format);
      await fails(lister, "folders.list", { pageSize: "101" }, "201", "pageSize", format);
      await fails(lister, "folders.list", { pageSize: "ten" }, "201", "pageSize", format);
      await fails(lister, "folders.list", { responseParams: "name,nope" }, "201", "responseParams", format);
      // first offending parameter in table order
      await fails(lister, "folders.list", { folderSortBy: "x", pageSize: "x" }, "201", "folderSortBy", format);
    });

    test(`${format}: responseParams keeps the named fields`, async () => {
      const r = await listFolders(lister, { responseParams: " name , items,name", pageSize: "1" }, format);
      assert.deepEqual(r.items, [{ name: "charlie", items: 0 }]);
    });
  }
});

describe("bookmarks", () => {
  let reader: typeof me;
  let owner: typeof me;
  let folderA: string;
  let folderB: string;
  before(async () => {
    reader = await callerFor("reader");
    owner = await callerFor("owner");
    await makeDoc(owner, "public-active", "A", { title: "Public active" }, 5);
    await makeDoc(owner, "private-active", "A", { access: "private" });
    await makeDoc(owner, "public-processing", "P");
    await makeDoc(owner, "public-failed", "F");
    await makeDoc(reader, "own-active", "A", { access: "private", title: "Own active" }, 2);
    await makeDoc(reader, "own-processing", "P");
    await makeDoc(reader, "own-failed", "F");
    folderA = String((await addFolder(reader, "A")).folderId);
    folderB = String((await addFolder(reader, "B")).folderId);
  });

  for (const format of FORMATS) {
    test(`${format}: bookmark.add answers the bookmark with every field`, async () => {
      const b = await addBookmark(reader, { documentUsername: "owner", name: "public-active", page: "5", folderIds: `${folderB}, ${folderA},${folderB}` }, format);
      assert.deepEqual(Object.keys(b), ["bookmarkId", "username", "documentId", "documentUsername", "name", "title", "description", "page", "created", "folders"]);
      assert.match(String(b.bookmarkId), UUID_V4);
      assert.equal(b.username, "reader");
      assert.match(String(b.documentId), /^\d{12}-[0-9a-f]{32}$/);
      assert.equal(b.documentUsername, "owner");
      assert.equal(b.name, "public-active");
      assert.equal(b.title, "Public active");
      assert.equal(b.description, "About public-active");
      assert.equal(b.page, 5);
      assert.match(String(b.created), DATE_MS);
      assert.deepEqual([...(b.folders as string[])].sort(), [folderA, folderB].sort());
      await ok(reader, "bookmark.delete", { bookmarkIds: String(b.bookmarkId) }, "bookmark");
    });

    test(`${format}: bookmark.add parameters, in table order`, async () => {
      await fails(reader, "bookmark.add", { name: "public-active" }, "200", "documentUsername", format);
      await fails(reader, "bookmark.add", { documentUsername: "", name: "public-active" }, "200", "documentUsername", format);
      await fails(reader, "bookmark.add", { documentUsername: "Not A User", name: "x" }, "201", "documentUsername", format);
      await fails(reader, "bookmark.add", { documentUsername: "owner" }, "200", "name", format);
      await fails(reader, "bookmark.add", { documentUsername: "owner", name: "Bad Name" }, "201", "name", format);
      for (const page of ["0", "-1", "abc", "1.0", "9999999999"]) {
        await fails(reader, "bookmark.add", { documentUsername: "owner", name: "public-active", page }, "201", "page", format);
      }
      const theirs = String((await addFolder(other, `theirs-b ${format}`)).folderId);
      await fails(reader, "bookmark.add", { documentUsername: "owner", name: "public-active", folderIds: `${folderA},${theirs}` }, "201", "folderIds", format);
      await fails(reader, "bookmark.add", { documentUsername: "owner", name: "public-active", folderIds: "no-such-folder" }, "201", "folderIds", format);
      await fails(reader, "bookmark.add", { documentUsername: "owner", name: "public-active", page: "6" }, "311", undefined, format);
      assert.equal((await listBookmarks(reader)).totalCount, 0, "nothing stored by refusals");
    });

    test(`${format}: another account's private or non-active documents are 300, a missing one too`, async () => {
      for (const name of ["private-active", "public-processing", "public-failed", "no-such-doc"]) {
        await fails(reader, "bookmark.add", { documentUsername: "owner", name }, "300", undefined, format);
      }
      await fails(reader, "bookmark.add", { documentUsername: "nobody", name: "public-active" }, "300", undefined, format);
      // a name of another account's document under the caller's username is not found either
      await fails(reader, "bookmark.add", { documentUsername: "reader", name: "public-active" }, "300", undefined, format);
    });
  }

  test("own documents in any state may be bookmarked; not yet converted ones at page 1 only", async () => {
    const own = await addBookmark(reader, { documentUsername: "reader", name: "own-active", page: "2" });
    assert.equal(own.title, "Own active");
    await fails(reader, "bookmark.add", { documentUsername: "reader", name: "own-active", page: "3" }, "311", undefined);
    const p = await addBookmark(reader, { documentUsername: "reader", name: "own-processing" });
    assert.equal(p.page, 1);
    await fails(reader, "bookmark.add", { documentUsername: "reader", name: "own-processing", page: "2" }, "311", undefined);
    const f = await addBookmark(reader, { documentUsername: "reader", name: "own-failed" });
    await ok(reader, "bookmark.delete", { bookmarkIds: [own.bookmarkId, p.bookmarkId, f.bookmarkId].join(",") }, "bookmark");
    assert.equal((await listBookmarks(reader)).totalCount, 0);
  });

  test("folderId absent / empty / given; folder listings and items omit P and F documents", async () => {
    const lib = await callerFor("library");
    const f1 = String((await addFolder(lib, "one")).folderId);
    const f2 = String((await addFolder(lib, "two")).folderId);
    await makeDoc(lib, "lib-p", "P");
    await makeDoc(lib, "lib-f", "F");
    await makeDoc(lib, "lib-a", "A", { title: "zeta" });
    const inF1 = await addBookmark(lib, { documentUsername: "owner", name: "public-active", folderIds: f1 });
    const inBoth = await addBookmark(lib, { documentUsername: "library", name: "lib-a", folderIds: `${f1},${f2}` });
    const pInF1 = await addBookmark(lib, { documentUsername: "library", name: "lib-p", folderIds: f1 });
    const fInF2 = await addBookmark(lib, { documentUsername: "library", name: "lib-f", folderIds: f2 });
    const loose = await addBookmark(lib, { documentUsername: "library", name: "lib-a" });
    const ids = (r: Result) => r.items.map((b) => b.bookmarkId);
    for (const format of FORMATS) {
      const all = await listBookmarks(lib, {}, format);
      assert.deepEqual(ids(all), [inF1, inBoth, pInF1, fInF2, loose].map((b) => b.bookmarkId));
      assert.deepEqual(ids(await listBookmarks(lib, { folderId: "" }, format)), [loose.bookmarkId]);
      assert.deepEqual(ids(await listBookmarks(lib, { folderId: f1 }, format)), [inF1.bookmarkId, inBoth.bookmarkId]);
      assert.deepEqual(ids(await listBookmarks(lib, { folderId: f2 }, format)), [inBoth.bookmarkId]);
      const folders = await listFolders(lib, { folderSortBy: "name" }, format);
      assert.deepEqual(folders.items.map((f) => [f.name, f.items]), [["one", 2], ["two", 1]]);
      await fails(lib, "bookmarks.list", { folderId: "no-such-folder" }, "201", "folderId", format);
      await fails(lib, "bookmarks.list", { folderId: folderA }, "201", "folderId", format);
    }
    // the processing document converts: it appears in the folder and its count
    await server.services.store.documents.markActive(String(pInF1.documentId), { pageCount: 1, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, Date.now());
    assert.equal((await listBookmarks(lib, { folderId: f1 })).totalCount, 3);
    assert.equal((await listFolders(lib, { folderSortBy: "name" })).items[0]!.items, 3);
    // sorting: title, both orders, ties by id in the same direction
    const byTitle = await listBookmarks(lib, { bookmarkSortBy: "title" });
    assert.deepEqual(byTitle.items.map((b) => b.title), ["Public active", "Title lib-f", "Title lib-p", "zeta", "zeta"]);
    const byTitleDesc = await listBookmarks(lib, { bookmarkSortBy: "title", resultOrder: "desc" });
    assert.deepEqual(ids(byTitleDesc), [...ids(byTitle)].reverse());
    const byName = await listBookmarks(lib, { bookmarkSortBy: "name", pageSize: "2", startIndex: "1" });
    assert.deepEqual([byName.totalCount, byName.more, byName.items.map((b) => b.name)], [5, true, ["lib-a", "lib-f"]]);
    // responseParams
    const slim = await listBookmarks(lib, { folderId: f2, responseParams: "folders,page" }, "xml");
    assert.deepEqual(slim.items, [{ page: 1, folders: [f1, f2] }]);
    await fails(lib, "bookmarks.list", { bookmarkSortBy: "ep" }, "201", "bookmarkSortBy");
    await fails(lib, "bookmarks.list", { responseParams: "state" }, "201", "responseParams");
    await fails(lib, "bookmarks.list", { pageSize: "101" }, "201", "pageSize");
    // deleting a folder: its bookmarks leave it, documents and bookmarks stay; unknown ids passed over
    await ok(lib, "folder.delete", { folderIds: `${f1},no-such-folder,${folderA}` }, "folder", "xml");
    assert.equal((await listFolders(lib)).totalCount, 1);
    assert.equal((await listFolders(reader)).items.some((f) => f.folderId === folderA), true, "another account's folder stays");
    assert.deepEqual(ids(await listBookmarks(lib, { folderId: "" })), [inF1.bookmarkId, pInF1.bookmarkId, loose.bookmarkId]);
    assert.equal((await listBookmarks(lib)).totalCount, 5);
    assert.equal((await ok(lib, "bookmark.update", { bookmarkId: String(inBoth.bookmarkId) }, "bookmark")).item!.folders instanceof Array, true);
    // another account sees none of these
    assert.equal((await listBookmarks(other)).totalCount, 0);
  });

  for (const format of FORMATS) {
    test(`${format}: bookmark.update and bookmark.delete, isolation between accounts`, async () => {
      const b = await addBookmark(reader, { documentUsername: "owner", name: "public-active", folderIds: folderA });
      const id = String(b.bookmarkId);
      await fails(reader, "bookmark.update", {}, "200", "bookmarkId", format);
      await fails(reader, "bookmark.update", { bookmarkId: "no-such", title: "\u0001" }, "201", "bookmarkId", format);
      await fails(other, "bookmark.update", { bookmarkId: id, title: "mine" }, "201", "bookmarkId", format);
      await fails(reader, "bookmark.update", { bookmarkId: id, title: "t".repeat(501) }, "201", "title", format);
      await fails(reader, "bookmark.update", { bookmarkId: id, description: "d".repeat(1001) }, "201", "description", format);
      await fails(reader, "bookmark.update", { bookmarkId: id, page: "0" }, "201", "page", format);
      await fails(reader, "bookmark.update", { bookmarkId: id, page: "6" }, "311", undefined, format);
      const u = (await ok(reader, "bookmark.update", { bookmarkId: id, title: "Mine", page: "4" }, "bookmark", format)).item!;
      assert.deepEqual({ ...u, title: b.title, page: b.page }, b);
      assert.deepEqual([u.title, u.description, u.page], ["Mine", "About public-active", 4]);
      const d = (await ok(reader, "bookmark.update", { bookmarkId: id, description: "Notes" }, "bookmark", format)).item!;
      assert.deepEqual([d.title, d.description, d.page], ["Mine", "Notes", 4]);
      // delete: required, another account's passed over, unknown passed over, empty list fine
      await fails(reader, "bookmark.delete", {}, "200", "bookmarkIds", format);
      const res = await call(other, "bookmark.delete", { bookmarkIds: id }, format);
      assert.ok(readAnswer(res, format, "bookmark").empty, res.body);
      assert.equal((await listBookmarks(reader)).totalCount, 1);
      assert.ok(readAnswer(await call(reader, "bookmark.delete", { bookmarkIds: " , " }, format), format, "bookmark").empty);
      assert.ok(readAnswer(await call(reader, "bookmark.delete", { bookmarkIds: `nope,${id}` }, format), format, "bookmark").empty);
      assert.equal((await listBookmarks(reader)).totalCount, 0);
      assert.equal((await listFolders(reader)).items.find((f) => f.folderId === folderA)!.items, 0);
    });

    test(`${format}: folder.delete parameters; empty answers`, async () => {
      await fails(me, "folder.delete", {}, "200", "folderIds", format);
      await fails(me, "folder.delete", { folderIds: "" }, "200", "folderIds", format);
      const res = await call(me, "folder.delete", { folderIds: "," }, format);
      assert.equal(res.body.trim().endsWith(format === "xml" ? '<rsp stat="ok"/>' : '{"rsp":{"stat":"ok"}}'), true, res.body);
      const theirs = await addFolder(other, `keep ${format}`);
      assert.ok(readAnswer(await call(me, "folder.delete", { folderIds: String(theirs.folderId) }, format), format, "folder").empty);
      assert.ok((await listFolders(other, { pageSize: "100" })).items.some((f) => f.folderId === theirs.folderId));
    });
  }

  test("JSON answers typed numbers; a bookmark's folders is an array, in XML folder elements with id", async () => {
    const b = await addBookmark(reader, { documentUsername: "owner", name: "public-active", folderIds: folderB });
    const json = readJson((await call(reader, "bookmarks.list", { folderId: folderB })).body);
    assert.equal(json.stat, "ok");
    const raw = await call(reader, "bookmarks.list", { folderId: folderB }, "xml");
    assert.match(raw.body, new RegExp(`<folders><folder id="${folderB}"/></folders>`));
    const j = JSON.parse((await call(reader, "bookmarks.list", { folderId: folderB })).body) as { rsp: { _content: { result: { _content: Array<{ bookmark: Item }> } } } };
    const item = j.rsp._content.result._content[0]!.bookmark;
    assert.equal(item.page, 1);
    assert.deepEqual(item.folders, [folderB]);
    const fj = JSON.parse((await call(reader, "folders.list", { responseParams: "items,ep" })).body) as { rsp: { _content: { result: { _content: Array<{ folder: Item }> } } } };
    assert.equal(typeof fj.rsp._content.result._content[0]!.folder.items, "number");
    assert.equal(typeof fj.rsp._content.result._content[0]!.folder.ep, "number");
    await ok(reader, "bookmark.delete", { bookmarkIds: String(b.bookmarkId) }, "bookmark");
  });
});
