import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { call, type Caller, callerOf } from "../helpers/api-client.ts";
import { assertError, type Embed, type Format, readEmbed, readEmbedList } from "../helpers/api-answers.ts";
import { insertDocument } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** svc.document_embeds.list (decisions §8): filter, sort, paging, responseParams, isolation. */

let server: TestServer;
let c: Caller;
let other: Caller;
let docA: string;
let docB: string;
/** In creation (= id) order. */
const made: Embed[] = [];

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  const o = await createAccount(server.services.store, "other");
  other = { server, apiKey: o.apiKey, apiSecret: o.apiSecret };
  docA = (await insertDocument(server, c, { pageCount: 9 })).documentId;
  docB = (await insertDocument(server, c, { pageCount: 9 })).documentId;
  const otherDoc = (await insertDocument(server, other)).documentId;
  const shapes: Array<[string, string, string]> = [
    [docA, "300", "3"], [docB, "100", "1"], [docA, "200", "9"], [docB, "100", "2"], [docA, "400", "1"],
  ];
  for (const [documentId, width, readerStartPage] of shapes) {
    made.push(readEmbed(await call(c, "document_embed.add", { documentId, width, readerStartPage }), "json"));
  }
  readEmbed(await call(other, "document_embed.add", { documentId: otherDoc }), "json");
});
after(() => server.close());

const FORMATS: Format[] = ["xml", "json"];
const ids = (l: { items: Array<Record<string, unknown>> }) => l.items.map((i) => i.id);
const list = async (params: Record<string, string>, format: Format = "json") => readEmbedList(await call(c, "document_embeds.list", params, format), format);

describe("svc.document_embeds.list", () => {
  for (const format of FORMATS) {
    test(`${format}: all of the account's embeds, by id ascending, whole records; never another account's`, async () => {
      const l = await list({}, format);
      assert.deepEqual({ ...l, items: [] }, { totalCount: 5, startIndex: 0, pageSize: 10, more: false, items: [] });
      assert.deepEqual(l.items, made);
    });

    test(`${format}: documentId filters; unknown or another account's document lists nothing`, async () => {
      const a = await list({ documentId: docA }, format);
      assert.equal(a.totalCount, 3);
      assert.deepEqual(ids(a), [made[0]!.id, made[2]!.id, made[4]!.id]);
      for (const documentId of ["nope", (await insertDocument(server, other)).documentId]) {
        const none = await list({ documentId }, format);
        assert.equal(none.totalCount, 0);
        assert.deepEqual(none.items, []);
        assert.equal(none.more, false);
      }
    });

    test(`${format}: embedSortBy in both orders, ties broken by id`, async () => {
      const m = made.map((e) => e.id);
      assert.deepEqual(ids(await list({ resultOrder: "desc" }, format)), [...m].reverse());
      assert.deepEqual(ids(await list({ embedSortBy: "id", resultOrder: "asc" }, format)), m);
      assert.deepEqual(ids(await list({ embedSortBy: "width" }, format)), [m[1], m[3], m[2], m[0], m[4]]);
      assert.deepEqual(ids(await list({ embedSortBy: "width", resultOrder: "desc" }, format)), [m[4], m[0], m[2], m[3], m[1]]);
      assert.deepEqual(ids(await list({ embedSortBy: "readerStartPage" }, format)), [m[1], m[4], m[3], m[0], m[2]]);
      assert.deepEqual(ids(await list({ embedSortBy: "created" }, format)).length, 5);
      const byDoc = ids(await list({ embedSortBy: "documentId" }, format));
      const [first, second] = docA < docB ? [[m[0], m[2], m[4]], [m[1], m[3]]] : [[m[1], m[3]], [m[0], m[2], m[4]]];
      assert.deepEqual(byDoc, [...first!, ...second!]);
    });

    test(`${format}: paging edges`, async () => {
      const m = made.map((e) => e.id);
      const p = await list({ startIndex: "1", pageSize: "2" }, format);
      assert.deepEqual({ ...p, items: ids(p) }, { totalCount: 5, startIndex: 1, pageSize: 2, more: true, items: [m[1], m[2]] });
      const last = await list({ startIndex: "3", pageSize: "2" }, format);
      assert.deepEqual({ ...last, items: ids(last) }, { totalCount: 5, startIndex: 3, pageSize: 2, more: false, items: [m[3], m[4]] });
      const counts = await list({ pageSize: "0" }, format);
      assert.deepEqual(counts, { totalCount: 5, startIndex: 0, pageSize: 0, more: true, items: [] });
      const beyond = await list({ startIndex: "5" }, format);
      assert.deepEqual(beyond, { totalCount: 5, startIndex: 5, pageSize: 10, more: false, items: [] });
      const far = await list({ startIndex: "999999999", pageSize: "100" }, format);
      assert.deepEqual(far, { totalCount: 5, startIndex: 999999999, pageSize: 100, more: false, items: [] });
      const empty = await list({ startIndex: "", pageSize: "", resultOrder: "", embedSortBy: "" }, format);
      assert.deepEqual(ids(empty), m, "empty values take defaults");
    });

    test(`${format}: malformed parameters are 201 on the first, in table order`, async () => {
      assertError(await call(c, "document_embeds.list", { embedSortBy: "title" }, format), format, "201", "embedSortBy");
      assertError(await call(c, "document_embeds.list", { embedSortBy: "ID" }, format), format, "201", "embedSortBy");
      assertError(await call(c, "document_embeds.list", { resultOrder: "up" }, format), format, "201", "resultOrder");
      for (const bad of ["-1", "x", "1.5", "1000000000"]) {
        assertError(await call(c, "document_embeds.list", { startIndex: bad }, format), format, "201", "startIndex");
      }
      for (const bad of ["101", "-1", "ten"]) assertError(await call(c, "document_embeds.list", { pageSize: bad }, format), format, "201", "pageSize");
      assertError(await call(c, "document_embeds.list", { responseParams: "id,title" }, format), format, "201", "responseParams");
      assertError(
        await call(c, "document_embeds.list", { embedSortBy: "x", resultOrder: "x", startIndex: "x", pageSize: "x", responseParams: "x" }, format),
        format, "201", "embedSortBy",
      );
      assertError(await call(c, "document_embeds.list", { resultOrder: "x", startIndex: "x", pageSize: "x", responseParams: "x" }, format), format, "201", "resultOrder");
      assertError(await call(c, "document_embeds.list", { startIndex: "x", pageSize: "x", responseParams: "x" }, format), format, "201", "startIndex");
      assertError(await call(c, "document_embeds.list", { pageSize: "x", responseParams: "x" }, format), format, "201", "pageSize");
    });

    test(`${format}: responseParams keeps only the named fields, in the record's order`, async () => {
      const l = await list({ responseParams: " width , id,width,,", pageSize: "2" }, format);
      assert.deepEqual(l.items, [{ id: made[0]!.id, width: 300 }, { id: made[1]!.id, width: 100 }]);
      const one = await list({ responseParams: "dataConfigId", pageSize: "1" }, format);
      assert.deepEqual(one.items, [{ dataConfigId: made[0]!.dataConfigId }]);
      if (format === "json") {
        const res = await call(c, "document_embeds.list", { responseParams: "width,created", pageSize: "1" }, format);
        const item = (JSON.parse(res.body) as { rsp: { _content: { result: { _content: Array<{ documentEmbed: object }> } } } }).rsp._content.result._content[0]!;
        assert.deepEqual(Object.keys(item.documentEmbed), ["width", "created"]);
      }
    });
  }

  test("XML: the result element and its items as written", async () => {
    const res = await call(c, "document_embeds.list", { pageSize: "1", responseParams: "id,width" }, "xml");
    assert.equal(
      res.body,
      `<?xml version="1.0" encoding="UTF-8"?><rsp stat="ok"><result totalCount="5" startIndex="0" pageSize="1" more="true"><documentEmbed id="${made[0]!.id}" width="300"/></result></rsp>`,
    );
    const none = await call(c, "document_embeds.list", { documentId: "nope" }, "json");
    assert.equal(none.body, '{"rsp":{"_content":{"result":{"totalCount":0,"startIndex":0,"pageSize":10,"more":false,"_content":[]}},"stat":"ok"}}');
  });
});
