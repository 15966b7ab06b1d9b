import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { call, type Caller, callerOf, getNormal, postNormal, sign } from "../helpers/api-client.ts";
import { assertError, type Format, readEmbed } from "../helpers/api-answers.ts";
import { insertDocument } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** svc.document_embed.get_html_code (decisions §8): the snippet itself as text/html; errors in the envelope. */

const TITLE = `Q&A <b>"quoted"</b> it's`;
const TITLE_ESCAPED = "Q&amp;A &lt;b&gt;&quot;quoted&quot;&lt;/b&gt; it&#39;s";

let server: TestServer;
let c: Caller;
let other: Caller;
let name: string;
let documentId: string;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  const o = await createAccount(server.services.store, "other");
  other = { server, apiKey: o.apiKey, apiSecret: o.apiSecret };
  ({ name, documentId } = await insertDocument(server, c, { pageCount: 7, title: TITLE, name: "annual-report.2024" }));
});
after(() => server.close());

const FORMATS: Format[] = ["xml", "json"];

function assertHtml(res: { status: number; headers: Record<string, string>; body: string }, expected: string): void {
  assert.equal(res.status, 200);
  assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
  assert.equal(res.headers["cache-control"], "no-store");
  assert.equal(res.body, expected);
}

describe("svc.document_embed.get_html_code", () => {
  test("an iframe of the embed page at the start page and size, every attribute value escaped", async () => {
    assert.equal(name, "annual-report.2024");
    const e = readEmbed(await call(c, "document_embed.add", { documentId, readerStartPage: "3", width: "640", height: "480" }), "json");
    const expected =
      `<iframe src="/tester/docs/annual-report.2024/embed?embed=${e.id}&amp;page=3" width="640" height="480" ` +
      `title="${TITLE_ESCAPED}" style="border:0" allowfullscreen></iframe>`;
    for (const format of FORMATS) assertHtml(await call(c, "document_embed.get_html_code", { embedId: String(e.id) }, format), expected);
    // no format, by POST, and as JSONP asked: still the snippet itself
    assertHtml(await getNormal(c, sign({ action: "svc.document_embed.get_html_code", apiKey: c.apiKey, embedId: String(e.id) }, c.apiSecret)), expected);
    assertHtml(await postNormal(c, sign({ action: "svc.document_embed.get_html_code", apiKey: c.apiKey, embedId: String(e.id), format: "json", jsonCallback: "cb" }, c.apiSecret)), expected);
    // an update shows in the snippet
    await call(c, "document_embed.update", { embedId: String(e.id), readerStartPage: "7", width: "1" });
    assertHtml(
      await call(c, "document_embed.get_html_code", { embedId: String(e.id) }),
      `<iframe src="/tester/docs/annual-report.2024/embed?embed=${e.id}&amp;page=7" width="1" height="480" title="${TITLE_ESCAPED}" style="border:0" allowfullscreen></iframe>`,
    );
  });

  for (const format of FORMATS) {
    test(`${format}: errors come in the envelope: 200, 201, 090, another account's embed 090`, async () => {
      const theirDoc = (await insertDocument(server, other)).documentId;
      const theirs = readEmbed(await call(other, "document_embed.add", { documentId: theirDoc }), "json");
      assertError(await call(c, "document_embed.get_html_code", {}, format), format, "200", "embedId");
      assertError(await call(c, "document_embed.get_html_code", { embedId: "1a" }, format), format, "201", "embedId");
      assertError(await call(c, "document_embed.get_html_code", { embedId: "424242" }, format), format, "090");
      assertError(await call(c, "document_embed.get_html_code", { embedId: String(theirs.id) }, format), format, "090");
      const badlySigned = { ...sign({ action: "svc.document_embed.get_html_code", apiKey: c.apiKey, format, embedId: "5" }, c.apiSecret), signature: "0".repeat(32) };
      assertError(await getNormal(c, badlySigned), format, "011");
    });
  }
});

describe("with QUIRE_PUBLIC_URL", () => {
  let pub: TestServer;
  before(async () => {
    pub = await startTestServer({ QUIRE_PUBLIC_URL: "https://docs.example.com/" });
  });
  after(() => pub.close());

  test("the iframe address is absolute on the public address", async () => {
    const pc = callerOf(pub);
    const d = await insertDocument(pub, pc, { pageCount: 2, title: "T", name: "doc-1" });
    const e = readEmbed(await call(pc, "document_embed.add", { documentId: d.documentId }), "json");
    assertHtml(
      await call(pc, "document_embed.get_html_code", { embedId: String(e.id) }),
      `<iframe src="https://docs.example.com/tester/docs/doc-1/embed?embed=${e.id}&amp;page=1" width="525" height="340" title="T" style="border:0" allowfullscreen></iframe>`,
    );
  });
});
