import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { acceptedUrlUpload, type Caller, callerOf, expectCreated, expectFailure, getNormal, type Params, postNormal, refusedUrlUpload, sign, SLURP, URL_UPLOAD, urlUpload } from "../helpers/api-client.ts";
import { seedAccount } from "../helpers/seed-account.ts";
import { type Format, JSON_TYPE, JSONP_TYPE, readJson } from "../helpers/api-answers.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * The rest of interface §4.2's optional parameters through svc.document.url_upload, with the
 * value rules of decisions §4: links, coded values, dates, folders, format and jsonCallback, and
 * empty values (default for the operation, counted for the signature).
 */

let server: TestServer;
let c: Caller;
let ownFolder: string;
let otherFolder: string;

async function addFolder(accountId: number, name: string): Promise<string> {
  const folderId = randomUUID();
  const now = Date.now();
  await dbOf(server.services.store)
    .insertInto("folders")
    .values({ folderId, accountId, name, description: "", createdAt: now, updatedAt: now })
    .execute();
  return folderId;
}

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  const me = await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey);
  const otherId = await seedAccount(server.services.store, "other", "o".repeat(32), "p".repeat(32), Date.now());
  ownFolder = await addFolder(me!.accountId, "mine");
  otherFolder = await addFolder(otherId, "theirs");
});
after(() => server.close());

const FORMATS = ["xml", "json"] as const;

const accepted = (extra: Params, format: Format = "json") => acceptedUrlUpload(server, c, extra, format);

const refused = (extra: Params, field: string, format: Format = "json") => refusedUrlUpload(server, c, extra, field, format);

describe("links, codes and access", () => {
  for (const format of FORMATS) {
    test(`${format}: infoLink is an absolute http(s) URL`, async () => {
      assert.equal((await accepted({ infoLink: "https://example.com/more?x=1" }, format)).infoLink, "https://example.com/more?x=1");
      for (const infoLink of ["ftp://example.com/x", "example.com/more", "/more", "https://example.com/a b", `https://example.com/${"i".repeat(2040)}`]) {
        await refused({ infoLink }, "infoLink", format);
      }
    });

    test(`${format}: language is an ISO 639-1 code in lowercase, unset is ""`, async () => {
      assert.equal((await accepted({ language: "en" }, format)).language, "en");
      assert.equal((await accepted({ language: "zu" }, format)).language, "zu");
      assert.equal((await accepted({ language: "" }, format)).language, "");
      for (const language of ["xx", "EN", "En", "eng", "e", "en-US"]) await refused({ language }, "language", format);
    });

    test(`${format}: access is public (default) or private`, async () => {
      assert.equal((await accepted({ access: "private" }, format)).access, "private");
      assert.equal((await accepted({ access: "public" }, format)).access, "public");
      assert.equal((await accepted({ access: "" }, format)).access, "public");
      for (const access of ["secret", "Private", "PUBLIC"]) await refused({ access }, "access", format);
    });

    test(`${format}: category and type are six digits from their lists, 000000 when unset`, async () => {
      const doc = await accepted({ category: "001000", type: "010000" }, format);
      assert.equal(doc.category, "001000");
      assert.equal(doc.type, "010000");
      assert.equal((await accepted({ category: "016000", type: "000000" }, format)).category, "016000");
      const unset = await accepted({ category: "", type: "" }, format);
      assert.equal(unset.category, "000000");
      assert.equal(unset.type, "000000");
      for (const category of ["999999", "1000", "017000", "00100a", "001000 "]) await refused({ category }, "category", format);
      for (const type of ["999999", "1000", "011000", "016000"]) await refused({ type }, "type", format);
    });

    test(`${format}: soundUrl must end in .mp3 or .m3u (path, any case)`, async () => {
      for (const soundUrl of ["https://example.com/a.mp3", "http://example.com/list.M3U", "https://example.com/a.Mp3?x=1"]) {
        assert.equal((await accepted({ soundUrl }, format)).soundUrl, soundUrl);
      }
      for (const soundUrl of ["https://example.com/a.wav", "https://example.com/mp3", "https://example.com/a.mp3x", "https://example.com/?f=a.mp3", "ftp://example.com/a.mp3", "a.mp3"]) {
        await refused({ soundUrl }, "soundUrl", format);
      }
    });
  }
});

describe("publishDate", () => {
  const GOOD: Array<[string, string]> = [
    ["2009-08-19T14:34:56+02:00", "2009-08-19T12:34:56.000Z"],
    ["2009-08-19T12:34:56Z", "2009-08-19T12:34:56.000Z"],
    ["2009-08-19T12:34:56.789Z", "2009-08-19T12:34:56.789Z"],
    ["2009-08-19T08:04:56-04:30", "2009-08-19T12:34:56.000Z"],
    ["2009-08-19", "2009-08-19T00:00:00.000Z"],
    ["2008-02-29", "2008-02-29T00:00:00.000Z"],
  ];
  const BAD = ["2009-02-30", "2009-02-29", "2009-13-01", "yesterday", "2009-08-19T12:00:00", "19-08-2009", "2009-08-19T25:00:00Z", "2009-08-19 12:00:00Z", "1250687696"];
  for (const format of FORMATS) {
    test(`${format}: ISO 8601 with a zone, or a date alone; answered in UTC with milliseconds`, async () => {
      for (const [publishDate, answered] of GOOD) {
        assert.equal((await accepted({ publishDate }, format)).publishDate, answered, publishDate);
      }
    });

    test(`${format}: impossible dates, other forms, and times without a zone are 201 on publishDate`, async () => {
      for (const publishDate of BAD) await refused({ publishDate }, "publishDate", format);
    });
  }
});

describe("folderIds", () => {
  for (const format of FORMATS) {
    test(`${format}: the account's own folder is answered in folders`, async () => {
      assert.deepEqual((await accepted({ folderIds: ` ${ownFolder} ,${ownFolder}` }, format)).folders, [ownFolder]);
      assert.deepEqual((await accepted({ folderIds: "" }, format)).folders, []);
    });

    test(`${format}: an unknown folder or another account's is 201 on folderIds`, async () => {
      await refused({ folderIds: randomUUID() }, "folderIds", format);
      await refused({ folderIds: otherFolder }, "folderIds", format);
      await refused({ folderIds: `${ownFolder},${otherFolder}` }, "folderIds", format);
    });
  }
});

describe("format and jsonCallback", () => {
  test("format yaml (or JSON in capitals) is 201 on format, answered in XML", async () => {
    await expectFailure(server, () => postNormal(c, urlUpload(c, { format: "yaml" })), "xml", "201", "format");
    await expectFailure(server, () => postNormal(c, urlUpload(c, { format: "JSON" })), "xml", "201", "format");
    // an empty format is the default
    await expectCreated(server, () => postNormal(c, urlUpload(c, { format: "" })), "xml");
    await expectCreated(server, () => postNormal(c, urlUpload(c, { format: "xml" })), "xml");
  });

  test("a JavaScript identifier path of at most 128 characters wraps the JSON", async () => {
    for (const cb of ["jQuery123_456", "app.handlers.done", "$", "_a.$b", `f${"x".repeat(127)}`]) {
      const before = await server.countRecords();
      const res = await getNormal(c, urlUpload(c, { format: "json", jsonCallback: cb }));
      assert.equal(res.status, 200);
      assert.equal(res.headers["content-type"], JSONP_TYPE);
      assert.ok(res.body.startsWith(`${cb}({"rsp":`) && res.body.endsWith("})"), res.body.slice(0, 200));
      assert.equal(readJson(res.body.slice(cb.length + 1, -1)).stat, "ok");
      assert.equal((await server.countRecords()).documents, before.documents + 1);
    }
  });

  test("anything else is 201 on jsonCallback, answered as plain JSON that never echoes it", async () => {
    const bad = ["alert(1)", "a-b", `f${"x".repeat(128)}`, "1abc", "a..b", "a.", ".a", "a b", "a;b", "<script>", "a[0]", "ä"];
    for (const cb of bad) {
      const res = await expectFailure(server, () => postNormal(c, urlUpload(c, { format: "json", jsonCallback: cb })), "json", "201", "jsonCallback");
      assert.equal(res.headers["content-type"], JSON_TYPE);
      assert.ok(res.body.startsWith('{"rsp":'), res.body);
      assert.ok(!res.body.includes(cb), `the callback ${cb} is not echoed`);
    }
  });

  test("a failure with a good callback is wrapped too", async () => {
    const before = await server.countRecords();
    const res = await postNormal(c, urlUpload(c, { format: "json", jsonCallback: "done", language: "xx" }));
    assert.equal(res.status, 200);
    assert.equal(res.headers["cache-control"], "no-store");
    assert.equal(res.headers["content-type"], JSONP_TYPE);
    assert.ok(res.body.startsWith("done(") && res.body.endsWith(")"), res.body);
    const answer = readJson(res.body.slice(5, -1));
    assert.equal(answer.stat, "fail");
    assert.deepEqual(answer.error, { code: "201", message: "Invalid field format", field: "language" });
    assert.deepEqual(await server.countRecords(), before);
  });
});

describe("empty values", () => {
  const OPTIONAL = [
    "name", "title", "tags", "commentsAllowed", "description", "downloadable", "infoLink", "language", "access", "explicit",
    "category", "type", "ratingsAllowed", "soundUrl", "publishDate", "folderIds", "jsonCallback",
  ];

  for (const format of FORMATS) {
    test(`${format}: every optional parameter sent empty takes its default`, async () => {
      const empty = Object.fromEntries(OPTIONAL.map((n) => [n, ""]));
      const doc = await expectCreated(server, () => getNormal(c, urlUpload(c, { format, ...empty })), format);
      const typed = (v: number | boolean) => (format === "xml" ? String(v) : v);
      assert.equal(doc.name, doc.documentId);
      assert.equal(doc.title, "report");
      assert.deepEqual(doc.tags, []);
      assert.equal(doc.description, "");
      assert.equal(doc.language, "");
      assert.equal(doc.access, "public");
      assert.equal(doc.category, "000000");
      assert.equal(doc.type, "000000");
      assert.equal(doc.commentsAllowed, typed(true));
      assert.equal(doc.downloadable, typed(false));
      assert.equal(doc.explicit, typed(false));
      assert.equal(doc.ratingsAllowed, typed(true));
      assert.equal(doc.infoLink, "");
      assert.equal(doc.soundUrl, "");
      assert.deepEqual(doc.folders, []);
      assert.match(doc.publishDate as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    test(`${format}: an empty parameter still counts for the signature`, async () => {
      // signed without the empty parameter, sent with it: the signature does not match
      const signedWithout = sign({ format, action: URL_UPLOAD, apiKey: c.apiKey, slurpUrl: SLURP }, c.apiSecret);
      await expectFailure(server, () => getNormal(c, { ...signedWithout, title: "" }), format, "011");
      await expectFailure(server, () => getNormal(c, `${new URLSearchParams(signedWithout)}&description`), format, "011");
      // signed with it (name followed by nothing): accepted
      await expectCreated(server, () => getNormal(c, urlUpload(c, { format, title: "" })), format);
      const withBare = urlUpload(c, { format, description: "" });
      const { description: _d, ...rest } = withBare;
      await expectCreated(server, () => getNormal(c, `${new URLSearchParams(rest)}&description`), format);
    });
  }
});
