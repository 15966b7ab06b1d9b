import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { call, callerOf, sign } from "../helpers/api-client.ts";
import { readEmbed } from "../helpers/api-answers.ts";
import { insertDocument } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { givePassword, signInHttp, TEST_APP_ENV } from "../helpers/app-client.ts";
import { linkOrigin, requestOrigin } from "../../src/ops/request-origin.ts";

/**
 * QUIRE_TRUST_PROXY (issue 26 item 1): who the client is (X-Forwarded-For: every per-address
 * limit) and which address it asked for (X-Forwarded-Proto/-Host: absolute links) are taken from
 * a proxy only when the operator named it; from anyone else they are ignored.
 */

/** A GET with every header chosen by the caller, the Host included (or left out). */
function rawGet(base: string, path: string, headers: Array<[string, string]>): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  let head = `GET ${path} HTTP/1.1\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  head += "Connection: close\r\n\r\n";
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c)).on("error", reject);
    socket.on("end", () => {
      const all = Buffer.concat(chunks).toString("latin1");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(all)?.[1] ?? 0);
      resolve({ status, body: all.slice(all.indexOf("\r\n\r\n") + 4) });
    });
    socket.write(head);
  });
}

const hostOf = (s: TestServer) => new URL(s.url).host;
/** One search from a client that says it is `forwardedFor` (the budget counts per client address). */
const search = (s: TestServer, forwardedFor: string) =>
  rawGet(s.url, "/search?q=anything", [["Host", hostOf(s)], ["X-Forwarded-For", forwardedFor]]).then((r) => r.status);

describe("QUIRE_TRUST_PROXY is read once, strictly", () => {
  test("off by default and for 0/off/false; a hop count; addresses, CIDRs and range names", () => {
    const read = (v?: string) => loadConfig({ QUIRE_DATA_DIR: "/tmp/x", ...(v === undefined ? {} : { QUIRE_TRUST_PROXY: v }) }).trustProxy;
    for (const off of [undefined, "", "0", "off", "FALSE"]) assert.equal(read(off), false, String(off));
    assert.equal(read("2"), 2);
    assert.deepEqual(read("10.0.0.1, 192.168.0.0/16,::1,fd00::/8,loopback"), ["10.0.0.1", "192.168.0.0/16", "::1", "fd00::/8", "loopback"]);
  });

  test("anything else refuses to start, naming what it did not understand", () => {
    for (const bad of ["true", "all", "*", "10.0.0.0/33", "::1/129", "proxy.example", "10.0.0.1,,x", "99", "-1", "1.2.3"]) {
      assert.throws(() => loadConfig({ QUIRE_DATA_DIR: "/tmp/x", QUIRE_TRUST_PROXY: bad }), (err: unknown) => err instanceof ConfigError && /QUIRE_TRUST_PROXY/.test(err.message), bad);
    }
  });
});

describe("the origin of copied links", () => {
  test("QUIRE_PUBLIC_URL is sure; the request's own is a guess; a Host that is no host gives none", () => {
    assert.deepEqual(linkOrigin({ publicUrl: "https://docs.example" }, { protocol: "http", host: "evil.example" }), { origin: "https://docs.example", guessed: false });
    assert.deepEqual(linkOrigin({ publicUrl: undefined }, { protocol: "https", host: "Docs.Example:8443" }), { origin: "https://docs.example:8443", guessed: true });
    assert.equal(requestOrigin({ protocol: "javascript", host: "docs.example" }), "http://docs.example", "any scheme but https is http");
    for (const junk of [undefined, "", "a b", "x/y", "x\"><b>", "x@y", "[::1", "host:port", "x:123456"]) {
      assert.deepEqual(linkOrigin({ publicUrl: undefined }, { protocol: "http", host: junk }), { origin: undefined, guessed: true }, String(junk));
    }
  });
});

describe("trust off (the default)", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ QUIRE_ANONYMOUS_BURST: "2", QUIRE_ANONYMOUS_PER_SECOND: "0.001", QUIRE_ALLOWED_HOSTS: "docs.example" });
  });
  after(() => s?.close());

  test("a forged X-Forwarded-For gets no fresh budget: every request counts against the socket's address", async () => {
    assert.equal(await search(s, "203.0.113.1"), 200);
    assert.equal(await search(s, "203.0.113.2"), 200);
    assert.equal(await search(s, "203.0.113.3"), 429);
  });

  test("a forged X-Forwarded-Host/-Proto names no origin, even one the operator allows", async () => {
    const robots = await rawGet(s.url, "/robots.txt", [["Host", hostOf(s)], ["X-Forwarded-Host", "docs.example"], ["X-Forwarded-Proto", "https"]]);
    assert.equal(robots.status, 200);
    assert.doesNotMatch(robots.body, /Sitemap|docs\.example/);
    const c = callerOf(s);
    const { documentId } = await insertDocument(s, c, { pageCount: 2, title: "T", name: "doc-1" });
    const e = readEmbed(await call(c, "document_embed.add", { documentId }), "json");
    const q = new URLSearchParams(sign({ action: "svc.document_embed.get_html_code", apiKey: c.apiKey, embedId: String(e.id) }, c.apiSecret)).toString();
    const code = await rawGet(s.url, `/1_0?${q}`, [["Host", hostOf(s)], ["X-Forwarded-Host", "evil.example"], ["X-Forwarded-Proto", "https"]]);
    assert.ok(code.body.includes(`src="http://${hostOf(s)}/tester/docs/doc-1/embed?`), code.body);
    assert.ok(!code.body.includes("evil.example"));
  });

  test("a Host that is junk gives relative links, never an origin made of it", async () => {
    const c = callerOf(s);
    const { documentId } = await insertDocument(s, c, { pageCount: 2, title: "T", name: "doc-2" });
    const e = readEmbed(await call(c, "document_embed.add", { documentId }), "json");
    const q = new URLSearchParams(sign({ action: "svc.document_embed.get_html_code", apiKey: c.apiKey, embedId: String(e.id) }, c.apiSecret)).toString();
    for (const junk of ["evil.example/x", "evil.example\"><script>", "a..b", "évil.example", "x:99999999"]) {
      const r = await rawGet(s.url, `/1_0?${q}`, [["Host", junk]]);
      if (r.status === 400) continue; // Node refused the header itself: as good
      assert.equal(r.status, 200, junk);
      assert.ok(r.body.startsWith(`<iframe src="/tester/docs/doc-2/embed?`), `${junk}: ${r.body}`);
      const robots = await rawGet(s.url, "/robots.txt", [["Host", junk]]);
      assert.doesNotMatch(robots.body, /Sitemap|evil/, junk);
    }
  });
});

describe("trust on for the proxy's address", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ QUIRE_TRUST_PROXY: "127.0.0.1", QUIRE_ANONYMOUS_BURST: "2", QUIRE_ANONYMOUS_PER_SECOND: "0.001", QUIRE_ALLOWED_HOSTS: "docs.example" });
  });
  after(() => s?.close());

  test("each client behind the proxy has its own budget; one client still meets its limit", async () => {
    for (const a of ["198.51.100.1", "198.51.100.2", "198.51.100.3", "2001:db8::1"]) assert.equal(await search(s, a), 200, a);
    assert.equal(await search(s, "198.51.100.9"), 200);
    assert.equal(await search(s, "198.51.100.9"), 200);
    assert.equal(await search(s, "198.51.100.9"), 429);
  });

  test("the proxy's X-Forwarded-Proto/-Host make the origin of absolute links", async () => {
    const robots = await rawGet(s.url, "/robots.txt", [["Host", hostOf(s)], ["X-Forwarded-Host", "docs.example"], ["X-Forwarded-Proto", "https"]]);
    assert.match(robots.body, /^Sitemap: https:\/\/docs\.example\/sitemap\.xml$/m);
    const c = callerOf(s);
    const { documentId } = await insertDocument(s, c, { pageCount: 2, title: "T", name: "doc-1" });
    const e = readEmbed(await call(c, "document_embed.add", { documentId }), "json");
    const q = new URLSearchParams(sign({ action: "svc.document_embed.get_html_code", apiKey: c.apiKey, embedId: String(e.id) }, c.apiSecret)).toString();
    const code = await rawGet(s.url, `/1_0?${q}`, [["Host", hostOf(s)], ["X-Forwarded-Host", "docs.example"], ["X-Forwarded-Proto", "https"]]);
    assert.ok(code.body.startsWith(`<iframe src="https://docs.example/tester/docs/doc-1/embed?`), code.body);
    // A forwarded host that is junk is no origin either.
    const junk = await rawGet(s.url, `/1_0?${q}`, [["Host", hostOf(s)], ["X-Forwarded-Host", "evil.example/<x>"], ["X-Forwarded-Proto", "javascript"]]);
    assert.ok(junk.body.startsWith(`<iframe src="/tester/docs/doc-1/embed?`), junk.body);
  });
});

describe("the share page behind a trusted proxy", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ ...TEST_APP_ENV, QUIRE_TRUST_PROXY: "127.0.0.1" });
    await givePassword(s, "tester");
  });
  after(() => s?.close());

  test("its link and embed codes use the address the reader's browser asked the proxy for, called a guess", async () => {
    const c = callerOf(s);
    const { documentId } = await insertDocument(s, c, { pageCount: 2, title: "T", name: "doc-1" });
    await call(c, "document_embed.add", { documentId });
    const session = await signInHttp(s.url, "tester");
    const proxied = { "x-forwarded-host": "docs.example", "x-forwarded-proto": "https" };
    const page = await (await session.get(`/app/documents/${documentId}/share`, proxied)).text();
    assert.ok(page.includes('id="reader-link">https://docs.example/tester/docs/doc-1</a>'), page);
    assert.ok(page.includes("&lt;iframe src=&quot;https://docs.example/tester/docs/doc-1/embed?embed="), "the embed code");
    assert.match(page, /id="origin-note">The link and embed codes use <strong>https:\/\/docs\.example<\/strong>[^<]*only a guess/);
  });
});

describe("the share page with QUIRE_PUBLIC_URL", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ ...TEST_APP_ENV, QUIRE_PUBLIC_URL: "http://docs.example" });
    await givePassword(s, "tester");
  });
  after(() => s?.close());

  test("links on the configured address, no guess to speak of, whatever the request says", async () => {
    const c = callerOf(s);
    const { documentId } = await insertDocument(s, c, { pageCount: 2, title: "T", name: "doc-1" });
    const session = await signInHttp(s.url, "tester");
    const page = await (await session.get(`/app/documents/${documentId}/share`, { "x-forwarded-host": "evil.example" })).text();
    assert.ok(page.includes('id="reader-link">http://docs.example/tester/docs/doc-1</a>'));
    assert.ok(!page.includes("origin-note") && !page.includes("evil.example"));
  });
});

describe("trust on for one hop", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ QUIRE_TRUST_PROXY: "1", QUIRE_ANONYMOUS_BURST: "2", QUIRE_ANONYMOUS_PER_SECOND: "0.001" });
  });
  after(() => s?.close());

  test("only the address the proxy added counts: what the client put before it is not believed", async () => {
    assert.equal(await search(s, "203.0.113.7, 198.51.100.20"), 200);
    assert.equal(await search(s, "203.0.113.8, 198.51.100.20"), 200);
    assert.equal(await search(s, "203.0.113.9, 198.51.100.20"), 429);
  });
});
