import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { parseXml, readAnswer, readList } from "../helpers/api-answers.ts";
import { callerOf, type Caller, call, refused } from "../helpers/api-client.ts";
import { accountIdOf, otherCaller } from "../helpers/api-seed.ts";
import { fillerPage, newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** `svc.documents.search` (decisions §11) against a real server, in XML and JSON. */

let server: TestServer;
let c: Caller;
let other: Caller & { accountId: number };

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  const me = { accountId: await accountIdOf(server, c), username: "tester" };
  other = await otherCaller(server, "other");
  const store = server.services.store;
  const pages = Array.from({ length: 40 }, (_, i) => fillerPage(i + 1));
  pages[36] = "The xylophone appears on this page alone.";
  await publishWithText(store, newStoreDoc(me.accountId, me.username, { title: "Annual report", name: "annual-report", nameGiven: true }), pages);
  await publishWithText(store, newStoreDoc(me.accountId, me.username, { title: "Xylophone care", access: "private" }), ["Tuning & <cleaning>."]);
  await publishWithText(store, newStoreDoc(other.accountId, "other", { title: "Xylophone for sale" }), ["xylophone"]);
});
after(() => server.close());

test("JSON: ranked documents with score and hits (page and snippet)", async () => {
  const r = readList(await call(c, "documents.search", { q: "xylophone" }), "json");
  assert.equal(r.totalCount, 2, "another account's documents are never searched");
  assert.deepEqual(r.docs.map((d) => d.title), ["Xylophone care", "Annual report"], "a title match first");
  const [first, second] = r.docs as Array<{ score: number; hits: Array<{ page: number; snippet: string }> }>;
  assert.ok(first!.score > second!.score && second!.score >= 0);
  assert.deepEqual(second!.hits.map((h) => h.page), [37]);
  assert.match(second!.hits[0]!.snippet, /\[\[xylophone\]\]/);
  assert.deepEqual(Object.keys(r.docs[0]!).slice(-2), ["score", "hits"]);
});

test("XML: hits/hit@page@snippet", async () => {
  const res = await call(c, "documents.search", { q: "xylophone", access: "public" }, "xml");
  assert.equal(readAnswer(res, "xml").stat, "ok");
  const parsed = parseXml(res.body, ["document", "hit"]) as {
    rsp: { result: { totalCount: string; document: Array<{ title: string; score: string; hits: { hit: Array<{ page: string; snippet: string }> } }> } };
  };
  const docs = parsed.rsp.result.document;
  assert.deepEqual(docs.map((d) => d.title), ["Annual report"]);
  assert.equal(docs[0]!.hits.hit[0]!.page, "37");
  assert.match(docs[0]!.hits.hit[0]!.snippet, /\[\[xylophone\]\]/);
  assert.match(res.body, /<hits><hit page="37" snippet="[^"]*\[\[xylophone\]\][^"]*"\/><\/hits>/);
});

test("responseParams keeps the named fields, score and hits included", async () => {
  const r = readList(await call(c, "documents.search", { q: "xylophone", responseParams: "title,score,hits" }), "json");
  assert.deepEqual(Object.keys(r.docs[0]!), ["title", "score", "hits"]);
});

test("paging and counts", async () => {
  const r = readList(await call(c, "documents.search", { q: "xylophone", pageSize: "1", startIndex: "1" }), "json");
  assert.equal(r.totalCount, 2);
  assert.equal(r.more, false);
  assert.deepEqual(r.docs.map((d) => d.title), ["Annual report"]);
  const counts = readList(await call(c, "documents.search", { q: "xylophone", pageSize: "0" }), "json");
  assert.equal(counts.totalCount, 2);
  assert.deepEqual(counts.docs, []);
});

test("errors: q missing or too long, bad filters, unknown responseParams", async () => {
  await refused(c, "documents.search", {}, "200", "q");
  await refused(c, "documents.search", { q: "x".repeat(501) }, "201", "q");
  await refused(c, "documents.search", { q: "a", access: "secret" }, "201", "access");
  await refused(c, "documents.search", { q: "a", documentStates: "A,X" }, "201", "documentStates");
  await refused(c, "documents.search", { q: "a", pageSize: "101" }, "201", "pageSize");
  await refused(c, "documents.search", { q: "a", responseParams: "title,secret" }, "201", "responseParams");
  await refused(c, "documents.search", { q: "a", format: "yaml" }, "201", "format", "xml");
  readList(await call(c, "documents.search", { q: "x".repeat(500) }), "json");
});

test("hostile queries are words, never operators or SQL", async () => {
  for (const q of ['"', "-", "' or 1=1 --", "NEAR(a b)", "a* OR b", "title:x", "\u202e", "<script>"]) {
    readList(await call(c, "documents.search", { q }), "json");
  }
  // The engines' syntax read as words: each query below finds other documents if read as FTS5 or
  // tsquery operators (OR, a prefix *, NEAR, a column filter) than as the words it is made of.
  const texts = ["wombat", "quokka or wombat", "wallaby", "dingo numbat", "near dingo numbat", "bilby", "title bilby", "wombat quokka"];
  const me = await accountIdOf(server, c);
  for (const [i, text] of texts.entries()) {
    await publishWithText(server.services.store, newStoreDoc(me, "tester", { title: `Hostile ${i}` }), [text]);
  }
  const found = async (q: string) =>
    readList(await call(c, "documents.search", { q, pageSize: "100" }), "json")
      .docs.map((d) => texts[Number(/^Hostile (\d+)$/.exec(String(d.title))?.[1] ?? NaN)])
      .filter((t) => t !== undefined)
      .sort();
  assert.deepEqual(await found("quokka* OR wombat"), ["quokka or wombat"], "OR and * are a word and nothing: all three words needed");
  assert.deepEqual(await found("walla*"), [], "no prefix search: walla is a word of its own");
  assert.deepEqual(await found("NEAR(dingo numbat)"), ["near dingo numbat"], "NEAR is a word, its parentheses nothing");
  assert.deepEqual(await found("title:bilby"), ["title bilby"], "no column filter: title is a word");
  // Quotes and a leading minus are the query language's own (docs/search.md), never the engine's.
  assert.deepEqual(await found("wombat -quokka"), ["wombat"], "-x excludes the word x");
  assert.deepEqual(await found('"numbat dingo"'), [], "a phrase is its words in order");
  assert.deepEqual(await found('"dingo numbat"'), ["dingo numbat", "near dingo numbat"]);
  assert.deepEqual(await found('dingo "numbat'), ["dingo numbat", "near dingo numbat"], "an unclosed quote is no syntax error");
});
