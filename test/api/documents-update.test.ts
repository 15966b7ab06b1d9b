import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { acceptedUrlUpload, call, type Caller, callerOf, getNormal, type Params, refused, sign } from "../helpers/api-client.ts";
import { assertDocument, assertError, assertNotFound, type Format, FORMATS } from "../helpers/api-answers.ts";
import { otherCaller } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** `svc.document.update` (decisions §8): the upload's value rules, omitted fields unchanged, `ep` moving. */

let server: TestServer;
let c: Caller;
let other: Caller & { accountId: number };
let n = 0;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  other = await otherCaller(server, "other");
});
after(() => server.close());

/** A fresh document of `who` with a caller-set name. */
async function fresh(who: Caller = c, extra: Params = {}): Promise<Record<string, unknown>> {
  return acceptedUrlUpload(server, who, { name: `upd-${n++}`, title: "Original", tags: "one,two", description: "orig", ...extra });
}

const update = async (params: Params, format: Format = "json", who: Caller = c) =>
  assertDocument(await call(who, "document.update", params, format), format);

const b = (format: Format, v: boolean): unknown => (format === "xml" ? String(v) : v);

describe("name (required)", () => {
  for (const format of FORMATS) {
    test(`${format}: absent or empty is 200, malformed 201, unknown 300`, async () => {
      await refused(c, "document.update", { title: "x" }, "200", "name", format);
      await refused(c, "document.update", { name: "", title: "x" }, "200", "name", format);
      await refused(c, "document.update", { name: "Bad Name", title: "x" }, "201", "name", format);
      await refused(c, "document.update", { name: "ab" }, "201", "name", format);
      assertNotFound(await call(c, "document.update", { name: "no-such-doc", title: "x" }, format), format);
    });

    test(`${format}: another account's document is not found and stays unchanged`, async () => {
      const theirs = await fresh(other);
      assertNotFound(await call(c, "document.update", { name: theirs.name as string, title: "hijacked" }, format), format);
      const still = await server.services.store.documents.getByName(other.accountId, theirs.name as string);
      assert.equal(still?.title, "Original");
      assert.equal(still?.updatedAt, Math.floor(still!.updatedAt));
    });
  }

  test("a malformed optional parameter is answered before the document is looked up", async () => {
    await refused(c, "document.update", { name: "no-such-doc", language: "xx" }, "201", "language");
  });
});

describe("changes", () => {
  for (const format of FORMATS) {
    test(`${format}: every field set, the full document answered, omitted fields unchanged`, async () => {
      const before = await fresh();
      const doc = await update({
        name: before.name as string,
        title: "New title", tags: " x , y,x", description: "New description", language: "de", category: "012000", type: "004000",
        publishDate: "2009-08-19T14:34:56+02:00", access: "private", commentsAllowed: "false", downloadable: "TRUE", explicit: "true",
        infoLink: "https://example.org/info", ratingsAllowed: "false", soundUrl: "http://example.org/a/b.MP3",
      }, format);
      assert.equal(doc.name, before.name);
      assert.equal(doc.documentId, before.documentId);
      assert.equal(doc.title, "New title");
      assert.deepEqual(doc.tags, ["x", "y"]);
      assert.equal(doc.description, "New description");
      assert.equal(doc.language, "de");
      assert.equal(doc.category, "012000");
      assert.equal(doc.type, "004000");
      assert.equal(doc.publishDate, "2009-08-19T12:34:56.000Z");
      assert.equal(doc.access, "private");
      assert.equal(doc.commentsAllowed, b(format, false));
      assert.equal(doc.downloadable, b(format, true));
      assert.equal(doc.explicit, b(format, true));
      assert.equal(doc.infoLink, "https://example.org/info");
      assert.equal(doc.ratingsAllowed, b(format, false));
      assert.equal(doc.soundUrl, "http://example.org/a/b.MP3");
      for (const k of ["username", "state", "origin", "orgDocType", "orgDocName", "revisionId", "publicationId", "pageCount"]) {
        assert.equal(String(doc[k]), String(before[k]), k);
      }
      assert.ok(Number(doc.ep) > Number(before.ep), "ep moves");
    });

    test(`${format}: only what is sent changes; empty values count as absent`, async () => {
      const before = await fresh(c, { language: "fr", category: "003000", access: "private", downloadable: "true" });
      const doc = await update({ name: before.name as string, title: "Only the title", description: "", tags: "" }, format);
      const { title, ep, ...restAfter } = doc;
      const { title: oldTitle, ep: oldEp, ...restBefore } = before;
      assert.equal(title, "Only the title");
      assert.notEqual(oldTitle, title);
      assert.ok(Number(ep) > Number(oldEp));
      if (format === "json") assert.deepEqual(restAfter, restBefore);
      else for (const [k, v] of Object.entries(restBefore)) assert.equal(String(restAfter[k]), String(v), k);
    });
  }

  test("ep moves on every update, even twice within one second; nothing sent but the name still moves it", async () => {
    const d = await fresh();
    const eps = [Number(d.ep)];
    for (let i = 0; i < 3; i++) eps.push(Number((await update({ name: d.name as string })).ep));
    for (let i = 1; i < eps.length; i++) assert.ok(eps[i]! > eps[i - 1]!, `ep ${eps.join(",")}`);
  });

  test("ratingAllowed is another spelling of ratingsAllowed; ratingsAllowed wins", async () => {
    const d = await fresh();
    assert.equal((await update({ name: d.name as string, ratingAllowed: "false" })).ratingsAllowed, false);
    assert.equal((await update({ name: d.name as string, ratingAllowed: "false", ratingsAllowed: "true" })).ratingsAllowed, true);
    await refused(c, "document.update", { name: d.name as string, ratingAllowed: "no" }, "201", "ratingAllowed");
  });

  test("a date alone is midnight UTC", async () => {
    const d = await fresh();
    assert.equal((await update({ name: d.name as string, publishDate: "2001-02-03" })).publishDate, "2001-02-03T00:00:00.000Z");
  });

  test("the change is stored: a list shows it", async () => {
    const d = await fresh();
    await update({ name: d.name as string, title: "Stored" });
    const rec = await server.services.store.documents.getById((await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey))!.accountId, d.documentId as string);
    assert.equal(rec?.title, "Stored");
    assert.equal(rec?.descriptionGiven, true);
  });
});

describe("newName", () => {
  for (const format of FORMATS) {
    test(`${format}: renames; the old name is gone, the new one is the caller's`, async () => {
      const d = await fresh();
      const doc = await update({ name: d.name as string, newName: `renamed-${format}` }, format);
      assert.equal(doc.name, `renamed-${format}`);
      assert.equal(doc.documentId, d.documentId);
      assertNotFound(await call(c, "document.update", { name: d.name as string, title: "x" }, format), format);
      assert.equal((await update({ name: `renamed-${format}`, title: "again" }, format)).title, "again");
      const owner = await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey);
      assert.equal((await server.services.store.documents.getByName(owner!.accountId, `renamed-${format}`))?.nameGiven, true);
    });
  }

  test("a document without a given name gets one, which then stays the caller's", async () => {
    const d = await acceptedUrlUpload(server, c, {});
    assert.equal(d.name, d.documentId);
    assert.equal((await update({ name: d.documentId as string, newName: "given-later" })).name, "given-later");
    const owner = await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey);
    assert.equal((await server.services.store.documents.getByName(owner!.accountId, "given-later"))?.nameGiven, true);
  });

  test("taken by another document of the account is 201 on newName; its own name or another account's name is fine", async () => {
    const a = await fresh();
    const bDoc = await fresh();
    await refused(c, "document.update", { name: a.name as string, newName: bDoc.name as string }, "201", "newName");
    await refused(c, "document.update", { name: a.name as string, newName: bDoc.name as string }, "201", "newName", "xml");
    assert.equal((await update({ name: a.name as string, newName: a.name as string })).name, a.name);
    const theirs = await fresh(other);
    assert.equal((await update({ name: a.name as string, newName: theirs.name as string })).name, theirs.name);
  });

  test("malformed is 201 on newName", async () => {
    const d = await fresh();
    for (const newName of ["ab", "Upper", "with space", "a".repeat(51), "ünï"]) {
      await refused(c, "document.update", { name: d.name as string, newName }, "201", "newName");
    }
  });
});

describe("malformed values: 201 on the first offending parameter in table order", () => {
  const BAD: Array<[string, string]> = [
    ["title", "x\u0001"],
    ["tags", Array.from({ length: 51 }, (_, i) => `t${i}`).join(",")],
    ["description", "d".repeat(1001)],
    ["language", "xx"],
    ["category", "123456"],
    ["type", "011000"],
    ["publishDate", "2009-02-30"],
    ["access", "secret"],
    ["commentsAllowed", "yes"],
    ["downloadable", "1"],
    ["explicit", "no"],
    ["infoLink", "ftp://example.com/info"],
    ["ratingsAllowed", "0"],
    ["soundUrl", "https://example.com/a.wav"],
    ["newName", "Bad"],
    ["format", "yaml"],
  ];
  let target: string;
  before(async () => {
    target = (await fresh()).name as string;
  });
  for (let i = 0; i < BAD.length; i++) {
    const [field] = BAD[i]!;
    test(`${field}`, async () => {
      const params = Object.fromEntries(BAD.slice(i));
      const format: Format = field === "format" ? "xml" : "json";
      const { format: _f, ...rest } = params;
      const signed = sign({ action: "svc.document.update", apiKey: c.apiKey, name: target, format: field === "format" ? "yaml" : "json", ...rest }, c.apiSecret);
      assertError(await getNormal(c, signed), format, "201", field);
    });
  }

  test("more malformed forms", async () => {
    const bad: Array<[string, string]> = [
      ["tags", `${"t".repeat(101)}`], ["description", "a\uFFFE"], ["language", "EN"], ["category", "1000"], ["type", "abc"],
      ["publishDate", "2009-08-19T12:34:56"], ["publishDate", "yesterday"], ["infoLink", "/relative"], ["soundUrl", "ftp://x.org/a.mp3"],
      ["title", "t".repeat(501)],
    ];
    for (const [field, value] of bad) await refused(c, "document.update", { name: target, [field]: value }, "201", field);
    const rec = await server.services.store.documents.getByName((await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey))!.accountId, target);
    assert.equal(rec?.title, "Original", "a refused update changes nothing");
  });
});
