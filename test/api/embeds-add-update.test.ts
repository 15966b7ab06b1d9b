import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { call, type Caller, callerOf } from "../helpers/api-client.ts";
import { assertError, type Format, readEmbed } from "../helpers/api-answers.ts";
import { accountIdOf, insertDocument } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/** svc.document_embed.add / update / delete (decisions §8, §9): parameters, codes, isolation. */

let server: TestServer;
let c: Caller;
let other: Caller;
let accountId: number;
let doc5: string; // active, 5 pages
let doc2: string; // active, 2 pages
let docP: string;
let docF: string;
let otherDoc: string;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  const o = await createAccount(server.services.store, "other");
  other = { server, apiKey: o.apiKey, apiSecret: o.apiSecret };
  accountId = await accountIdOf(server, c.apiKey);
  doc5 = (await insertDocument(server, c, { pageCount: 5 })).documentId;
  doc2 = (await insertDocument(server, c, { pageCount: 2 })).documentId;
  docP = (await insertDocument(server, c, { state: "P" })).documentId;
  docF = (await insertDocument(server, c, { state: "F" })).documentId;
  otherDoc = (await insertDocument(server, other, { pageCount: 9 })).documentId;
});
after(() => server.close());

const FORMATS: Format[] = ["xml", "json"];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function countEmbeds(): Promise<number> {
  const r = await dbOf(server.services.store).selectFrom("embeds").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(r.n);
}

async function add(params: Record<string, string>, format: Format = "json") {
  return readEmbed(await call(c, "document_embed.add", params, format), format);
}

describe("svc.document_embed.add", () => {
  for (const format of FORMATS) {
    test(`${format}: defaults 1, 525 × 340; every field of documentEmbed`, async () => {
      const t0 = Date.now();
      const e = await add({ documentId: doc5 }, format);
      const t1 = Date.now();
      assert.ok(Number.isInteger(e.id) && e.id > 0);
      assert.equal(e.dataConfigId, `${accountId}/${e.id}`);
      assert.equal(e.documentId, doc5);
      assert.equal(e.readerStartPage, 1);
      assert.equal(e.width, 525);
      assert.equal(e.height, 340);
      assert.match(e.created, ISO_MS);
      const created = Date.parse(e.created);
      assert.ok(created >= t0 && created <= t1, "created is the time of the request");
    });

    test(`${format}: start page, width and height as given, up to the last page and 10000 pixels`, async () => {
      const e = await add({ documentId: doc5, readerStartPage: "5", width: "10000", height: "1" }, format);
      assert.deepEqual([e.readerStartPage, e.width, e.height], [5, 10000, 1]);
      const d = await add({ documentId: doc5, readerStartPage: "", width: "", height: "" }, format);
      assert.deepEqual([d.readerStartPage, d.width, d.height], [1, 525, 340], "empty optional values take their defaults");
    });

    test(`${format}: documentId missing or empty is 200; malformed numbers are 201 in table order`, async () => {
      const before = await countEmbeds();
      assertError(await call(c, "document_embed.add", {}, format), format, "200", "documentId");
      assertError(await call(c, "document_embed.add", { documentId: "" }, format), format, "200", "documentId");
      assertError(await call(c, "document_embed.add", { width: "x" }, format), format, "200", "documentId");
      for (const bad of ["0", "-1", "1.5", "abc", "1e3", " 2", "+3", "9999999999"]) {
        assertError(await call(c, "document_embed.add", { documentId: doc5, readerStartPage: bad }, format), format, "201", "readerStartPage");
      }
      for (const bad of ["0", "-5", "10001", "52.5", "wide", "0x10"]) {
        assertError(await call(c, "document_embed.add", { documentId: doc5, width: bad }, format), format, "201", "width");
        assertError(await call(c, "document_embed.add", { documentId: doc5, height: bad }, format), format, "201", "height");
      }
      assertError(await call(c, "document_embed.add", { documentId: doc5, readerStartPage: "0", width: "0", height: "0" }, format), format, "201", "readerStartPage");
      assertError(await call(c, "document_embed.add", { documentId: doc5, width: "0", height: "0" }, format), format, "201", "width");
      // malformed parameters before the document is looked up
      assertError(await call(c, "document_embed.add", { documentId: "nope", height: "0" }, format), format, "201", "height");
      assert.equal(await countEmbeds(), before, "nothing stored");
    });

    test(`${format}: 300 unknown or another account's document, 307 in P, 308 in F, 311 beyond the pages`, async () => {
      const before = await countEmbeds();
      assertError(await call(c, "document_embed.add", { documentId: "nope" }, format), format, "300");
      assertError(await call(c, "document_embed.add", { documentId: otherDoc }, format), format, "300");
      assertError(await call(c, "document_embed.add", { documentId: docP }, format), format, "307");
      assertError(await call(c, "document_embed.add", { documentId: docF }, format), format, "308");
      assertError(await call(c, "document_embed.add", { documentId: doc2, readerStartPage: "3" }, format), format, "311");
      assertError(await call(c, "document_embed.add", { documentId: docP, readerStartPage: "3" }, format), format, "307");
      assert.equal(await countEmbeds(), before, "nothing stored");
      // the other account can embed its own document
      const e = readEmbed(await call(other, "document_embed.add", { documentId: otherDoc, readerStartPage: "9" }, format), format);
      assert.equal(e.dataConfigId, `${await accountIdOf(server, other.apiKey)}/${e.id}`);
    });
  }
});

describe("svc.document_embed.update", () => {
  for (const format of FORMATS) {
    test(`${format}: embedId 200 / 201 / 090, another account's embed is 090`, async () => {
      const mine = await add({ documentId: doc5 });
      const theirs = readEmbed(await call(other, "document_embed.add", { documentId: otherDoc }), "json");
      assertError(await call(c, "document_embed.update", {}, format), format, "200", "embedId");
      assertError(await call(c, "document_embed.update", { embedId: "", width: "5" }, format), format, "200", "embedId");
      for (const bad of ["abc", "-1", "1.0", "1,2"]) assertError(await call(c, "document_embed.update", { embedId: bad }, format), format, "201", "embedId");
      assertError(await call(c, "document_embed.update", { embedId: String(mine.id), width: "0" }, format), format, "201", "width");
      for (const unknown of ["0", "999999", "99999999999999"]) assertError(await call(c, "document_embed.update", { embedId: unknown }, format), format, "090");
      assertError(await call(c, "document_embed.update", { embedId: String(theirs.id), width: "1" }, format), format, "090");
      assertError(await call(c, "document_embed.update", { embedId: "999999", documentId: "nope" }, format), format, "090");
      const still = (await server.services.store.embeds.get(await accountIdOf(server, other.apiKey), theirs.id))!;
      assert.equal(still.width, 525, "unchanged");
    });

    test(`${format}: changes only what is given`, async () => {
      const e = await add({ documentId: doc5, readerStartPage: "2", width: "600", height: "400" });
      const u = readEmbed(await call(c, "document_embed.update", { embedId: String(e.id), height: "450" }, format), format);
      assert.deepEqual(u, { ...e, height: 450 });
      const v = readEmbed(await call(c, "document_embed.update", { embedId: String(e.id), readerStartPage: "5", width: "" }, format), format);
      assert.deepEqual(v, { ...e, height: 450, readerStartPage: 5 });
      const w = readEmbed(await call(c, "document_embed.update", { embedId: String(e.id), documentId: doc2, readerStartPage: "2" }, format), format);
      assert.deepEqual(w, { ...e, height: 450, readerStartPage: 2, documentId: doc2 });
      const x = readEmbed(await call(c, "document_embed.update", { embedId: String(e.id) }, format), format);
      assert.deepEqual(x, w, "nothing given: nothing changes");
    });

    test(`${format}: documentId checked as in add; the resulting start page must exist`, async () => {
      const e = await add({ documentId: doc5, readerStartPage: "4" });
      const id = String(e.id);
      assertError(await call(c, "document_embed.update", { embedId: id, documentId: "nope" }, format), format, "300");
      assertError(await call(c, "document_embed.update", { embedId: id, documentId: otherDoc }, format), format, "300");
      assertError(await call(c, "document_embed.update", { embedId: id, documentId: docP }, format), format, "307");
      assertError(await call(c, "document_embed.update", { embedId: id, documentId: docF }, format), format, "308");
      assertError(await call(c, "document_embed.update", { embedId: id, readerStartPage: "6" }, format), format, "311");
      // page 4 does not exist in the 2-page document
      assertError(await call(c, "document_embed.update", { embedId: id, documentId: doc2 }, format), format, "311");
      assertError(await call(c, "document_embed.update", { embedId: id, documentId: doc2, readerStartPage: "3" }, format), format, "311");
      const now = (await server.services.store.embeds.get(accountId, e.id))!;
      assert.equal(now.documentId, doc5);
      assert.equal(now.readerStartPage, 4, "a refused update changes nothing");
    });
  }
});

describe("svc.document_embed.delete", () => {
  for (const format of FORMATS) {
    test(`${format}: empty ok; then 090; 200/201 on embedId; another account's is 090 and stays`, async () => {
      const e = await add({ documentId: doc5 });
      const theirs = readEmbed(await call(other, "document_embed.add", { documentId: otherDoc }), "json");
      assertError(await call(c, "document_embed.delete", {}, format), format, "200", "embedId");
      assertError(await call(c, "document_embed.delete", { embedId: "x1" }, format), format, "201", "embedId");
      assertError(await call(c, "document_embed.delete", { embedId: String(theirs.id) }, format), format, "090");
      assert.ok(await server.services.store.embeds.get(await accountIdOf(server, other.apiKey), theirs.id));
      const res = await call(c, "document_embed.delete", { embedId: String(e.id) }, format);
      assert.equal(res.status, 200);
      assert.equal(res.headers["cache-control"], "no-store");
      if (format === "xml") {
        assert.equal(res.headers["content-type"], "text/xml; charset=utf-8");
        assert.equal(res.body, '<?xml version="1.0" encoding="UTF-8"?><rsp stat="ok"/>');
      } else {
        assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
        assert.equal(res.body, '{"rsp":{"stat":"ok"}}');
      }
      assert.equal(await server.services.store.embeds.get(accountId, e.id), undefined);
      assertError(await call(c, "document_embed.delete", { embedId: String(e.id) }, format), format, "090");
      assertError(await call(c, "document_embed.update", { embedId: String(e.id) }, format), format, "090");
    });
  }
});

describe("format and jsonCallback close every embed operation's table", () => {
  test("a bad format is 201 on format (answered in XML), a bad callback 201 on jsonCallback, after the operation's own parameters", async () => {
    const e = await add({ documentId: doc5 });
    const cases: Array<[string, Record<string, string>]> = [
      ["document_embed.add", { documentId: doc5 }],
      ["document_embed.update", { embedId: String(e.id) }],
      ["document_embed.get_html_code", { embedId: String(e.id) }],
      ["document_embeds.list", {}],
      ["document_embed.delete", { embedId: String(e.id) }],
    ];
    for (const [action, params] of cases) {
      assertError(await call(c, action, { ...params, format: "yaml" }, "xml"), "xml", "201", "format");
      assertError(await call(c, action, { ...params, jsonCallback: "alert(1)" }, "json"), "json", "201", "jsonCallback");
    }
    // nothing above changed anything: the embed is still there
    assert.equal((await add({ documentId: doc5 })).documentId, doc5);
    assert.equal(readEmbed(await call(c, "document_embed.update", { embedId: String(e.id) }), "json").id, e.id);
  });
});
