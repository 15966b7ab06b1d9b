import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { callerOf } from "../helpers/api-client.ts";
import { accountIdOf, otherCaller } from "../helpers/api-seed.ts";
import { fillerPage, newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { READER_FIXTURE, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/** `/search?q=` and `/<username>?q=` (decisions §11): public documents only, snippets, reader links. */

let web: WebFixture;
let converted: DocumentRecord;
let page37: DocumentRecord;
let priv: DocumentRecord;

const get = async (path: string) => {
  const res = await fetch(web.server.url + path);
  return { status: res.status, headers: res.headers, body: await res.text() };
};

before(async () => {
  web = await startWebFixture();
  const store = web.server.services.store;
  const me = await accountIdOf(web.server, callerOf(web.server));
  const other = await otherCaller(web.server, "other");
  // One document through the real pipeline: its text is indexed by the conversion job itself.
  converted = await web.publish(READER_FIXTURE, { title: "Type specimens" });
  const pages = Array.from({ length: 40 }, (_, i) => fillerPage(i + 1));
  pages[36] = "The quokka <script>alert(1)</script> lives on Rottnest Island.";
  page37 = await publishWithText(store, newStoreDoc(me, "tester", { title: "Island report", name: "island-report", nameGiven: true }), pages);
  priv = await publishWithText(store, newStoreDoc(me, "tester", { title: "Quokka secrets", access: "private" }), ["quokka"]);
  await publishWithText(store, newStoreDoc(other.accountId, "other", { title: "Quokka photos" }), ["A quokka smiling."]);
});
after(() => web.close());

test("a converted document is found by a word of its page 14, linked at that page", async () => {
  assert.equal(converted.state, "A");
  const { status, body } = await get("/search?q=zapfdingbats");
  assert.equal(status, 200);
  assert.match(body, /1 document matches “zapfdingbats”/);
  assert.ok(body.includes(`href="/tester/docs/${converted.name}?q=zapfdingbats#page=14"`), "links the reader at page 14 with the query");
  assert.match(body, /<mark>zapfdingbats<\/mark>/i);
});

test("/search: every account's public documents, never a private one; snippets escaped", async () => {
  const { body, headers } = await get("/search?q=quokka");
  assert.equal(headers.get("x-robots-tag"), "noindex, nofollow");
  assert.match(body, /2 documents match/);
  assert.ok(body.includes("Quokka photos") && body.includes("Island report"));
  assert.ok(!body.includes("Quokka secrets") && !body.includes(priv.name), "private documents never appear");
  assert.ok(body.includes(`href="/tester/docs/island-report?q=quokka#page=37"`));
  assert.ok(!body.includes("<script>alert"), "page text is escaped");
  assert.match(body, /<mark>quokka<\/mark> &lt;script&gt;/i);
  assert.ok(body.indexOf("Quokka photos") < body.indexOf("Island report"), "a title match first");
});

test("/<username>?q=: one account's public documents, with the search box", async () => {
  const { body } = await get("/tester?q=quokka");
  assert.match(body, /1 document matches/);
  assert.ok(body.includes("Island report") && !body.includes("Quokka photos") && !body.includes("Quokka secrets"));
  assert.match(body, /<form class="search site-search" role="search" method="get" action="\/tester">/);
  const plain = await get("/tester");
  assert.match(plain.body, /<input id="site-q" name="q" type="search" value=""/);
  assert.ok(plain.body.includes(converted.title));
});

test("changes show at once: a document made private or deleted leaves the results", async () => {
  const store = web.server.services.store;
  await store.documents.update(page37.accountId, page37.documentId, { access: "private", updatedAt: Date.now() });
  assert.match((await get("/search?q=rottnest")).body, /No document matches/);
  await store.documents.update(page37.accountId, page37.documentId, { access: "public", updatedAt: Date.now() });
  assert.match((await get("/search?q=rottnest")).body, /1 document matches/);
  await store.documents.deleteByNames(page37.accountId, [page37.name]);
  assert.match((await get("/search?q=rottnest")).body, /No document matches/);
});

test("hostile and odd queries: escaped, bounded, never an error", async () => {
  for (const q of ['"><img src=x>', "-", '"', "a".repeat(5000), "%", "\u202e", "x OR y", "page=1&q=2"]) {
    const { status, body } = await get(`/search?q=${encodeURIComponent(q)}&page=9999`);
    assert.equal(status, 200, q);
    assert.ok(!body.includes("<img src=x>"), q);
  }
  assert.equal((await get("/search")).status, 200);
  assert.equal((await get("/search/docs/x")).status, 404, "'search' is no username");
});
