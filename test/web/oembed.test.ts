import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { XMLParser } from "fast-xml-parser";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { callerOf } from "../helpers/api-client.ts";
import { accountIdOf } from "../helpers/api-seed.ts";
import { newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** oEmbed (https://oembed.com/): answers checked against the specification's rules, discovery links, private documents. */

let server: TestServer;
let pub: DocumentRecord;
let priv: DocumentRecord;
let pending: DocumentRecord;

const readerUrl = (d: DocumentRecord) => `${server.url}/tester/docs/${d.name}`;
const oembed = (params: Record<string, string>) => fetch(`${server.url}/oembed?${new URLSearchParams(params)}`);

before(async () => {
  // The tests' own address is the host an operator lists: absolute links are made from it.
  server = await startTestServer({ QUIRE_ALLOWED_HOSTS: "127.0.0.1" });
  const accountId = await accountIdOf(server, callerOf(server));
  const store = server.services.store;
  pub = await publishWithText(store, newStoreDoc(accountId, "tester", { title: 'Tides & "moons" <b>', name: "tides", nameGiven: true }), ["one", "two", "three"]);
  priv = await publishWithText(store, newStoreDoc(accountId, "tester", { title: "Hidden", access: "private" }), ["secret"]);
  pending = newStoreDoc(accountId, "tester", { title: "Pending", state: "P", name: "pending-doc", nameGiven: true });
  await store.documents.insertWithJob(pending, "convert-document");
});
after(() => server.close());

/** The rules of oembed.com §2.3.4 for a rich answer. */
function assertRich(a: Record<string, unknown>, max: { width?: number; height?: number } = {}): void {
  assert.equal(a.type, "rich");
  assert.equal(a.version, "1.0");
  assert.equal(typeof a.html, "string");
  assert.match(a.html as string, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/tester\/docs\/[^"]+\/embed(\?page=\d+)?" width="\d+" height="\d+" title="[^"<>]*" style="border:0" allowfullscreen><\/iframe>$/);
  for (const k of ["width", "height"]) assert.ok(Number.isInteger(a[k]) && (a[k] as number) > 0, k);
  if (max.width !== undefined) assert.ok((a.width as number) <= max.width);
  if (max.height !== undefined) assert.ok((a.height as number) <= max.height);
  if ("thumbnail_url" in a) {
    assert.ok((a.thumbnail_width as number) <= (max.width ?? Infinity) && (a.thumbnail_height as number) <= (max.height ?? Infinity));
  } else {
    assert.ok(!("thumbnail_width" in a) && !("thumbnail_height" in a), "thumbnail fields come together");
  }
}

test("JSON answer for a public document's reader address", async () => {
  const res = await oembed({ url: readerUrl(pub) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  const a = (await res.json()) as Record<string, unknown>;
  assertRich(a);
  assert.deepEqual([a.width, a.height], [525, 340]);
  assert.equal(a.title, 'Tides & "moons" <b>');
  assert.match(a.html as string, /title="Tides &amp; &quot;moons&quot; &lt;b&gt;"/, "the title is escaped inside the html");
  assert.equal(a.author_name, "tester");
  assert.equal(a.author_url, `${server.url}/tester`);
  assert.equal(a.provider_name, "Quire");
});

test("maxwidth and maxheight bound the answer; a page in the address is kept", async () => {
  for (const [w, h] of [[300, 1000], [1000, 100], [600, 400], [10, 10]] as const) {
    const a = (await (await oembed({ url: readerUrl(pub), maxwidth: String(w), maxheight: String(h) })).json()) as Record<string, unknown>;
    assertRich(a, { width: w, height: h });
  }
  const a = (await (await oembed({ url: `${readerUrl(pub)}?page=2` })).json()) as { html: string };
  assert.match(a.html, /\/embed\?page=2"/);
  assert.equal((await oembed({ url: readerUrl(pub), maxwidth: "wide" })).status, 400);
});

test("XML when asked; 501 for another format", async () => {
  const res = await oembed({ url: readerUrl(pub), format: "xml" });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/xml; charset=utf-8");
  const body = await res.text();
  assert.match(body, /^<\?xml version="1\.0" encoding="utf-8" standalone="yes"\?>\n<oembed>/);
  const a = (new XMLParser({ parseTagValue: false }).parse(body) as { oembed: Record<string, string> }).oembed;
  assertRich({ ...a, width: Number(a.width), height: Number(a.height) });
  assert.equal((await oembed({ url: readerUrl(pub), format: "yaml" })).status, 501);
});

test("404 for unknown, foreign, pending or malformed addresses", async () => {
  for (const url of [
    `${server.url}/tester/docs/nothing-here`, `${server.url}/nobody/docs/tides`, `http://evil.example/tester/docs/tides`,
    readerUrl(pending), `${server.url}/tester`, "not a url", `${server.url}/tester/docs/%E0%A4%A`, "javascript:alert(1)",
    `http://user:pw@127.0.0.1/tester/docs/tides`,
  ]) {
    assert.equal((await oembed({ url })).status, 404, url);
  }
  assert.equal((await fetch(`${server.url}/oembed`)).status, 404);
});

test("a private document answers as its reader does, never indexed; no listing links it", async () => {
  const res = await oembed({ url: readerUrl(priv) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-robots-tag"), "noindex, nofollow");
  assertRich((await res.json()) as Record<string, unknown>);
  for (const path of ["/tester", "/search?q=secret", "/sitemap.xml"]) {
    const page = await (await fetch(server.url + path)).text();
    assert.ok(!page.includes(priv.name), `${path} names no private document`);
    assert.doesNotMatch(page, /oembed/, `${path} links no oEmbed answer`);
  }
});

test("reader pages carry the discovery links; embeds and listings do not", async () => {
  const reader = await (await fetch(readerUrl(pub))).text();
  const encoded = encodeURIComponent(readerUrl(pub));
  assert.ok(reader.includes(`<link rel="alternate" type="application/json+oembed" href="${server.url}/oembed?url=${encoded}&amp;format=json"`));
  assert.ok(reader.includes(`type="text/xml+oembed" href="${server.url}/oembed?url=${encoded}&amp;format=xml"`));
  const href = /application\/json\+oembed" href="([^"]+)"/.exec(reader)![1]!.replace(/&amp;/g, "&");
  assertRich((await (await fetch(href)).json()) as Record<string, unknown>);
  assert.doesNotMatch(await (await fetch(`${readerUrl(pub)}/embed`)).text(), /oembed/);
});
