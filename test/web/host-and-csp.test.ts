import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { plainHttpOrigin, publicOrigin } from "../../src/web/public-origin.ts";
import { READER_FIXTURE, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";
import { dbOf } from "../helpers/store-db.ts";

/** A GET with the Host header the client chooses (fetch would send the address's own). */
function getWithHost(base: string, path: string, host: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject).end();
  });
}

/** `default-src 'none'; media-src x` as a map of directive → its sources. */
function parseCsp(header: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of header.split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name.toLowerCase(), values);
  }
  return out;
}

const EVIL = "evil.example";
const GOOD = "good.example";

/** Issue 11 item 7: no header or link a reader gets is built from unchecked input. */
describe("headers and links built from input", { timeout: 180_000 }, () => {
  let fx: WebFixture;
  let doc: DocumentRecord;
  let base: string;
  const readerPath = () => `/${doc.username}/docs/${doc.name}`;

  before(async () => {
    // The fixture lists 127.0.0.1; this server lists one public name only, as a deployment would.
    fx = await startWebFixture({ QUIRE_ALLOWED_HOSTS: GOOD });
    base = fx.server.url;
    doc = await fx.publish(READER_FIXTURE, { title: "Host test" });
    assert.equal(doc.state, "A", `${doc.errorCode} ${doc.errorMessage}`);
  });
  after(async () => {
    await fx?.close();
  });

  test("a soundUrl whose host carries CSP syntax adds no directive to the reader's policy", async () => {
    const hostile = "http://x;sandbox;frame-src;worker-src/a.mp3";
    // The API may refuse it; a record stored before such a check must be harmless all the same.
    const answer = await fx.client.call("document.update", { name: doc.name, soundUrl: hostile });
    if (answer.rsp.stat !== "ok") {
      await dbOf(fx.server.services.store).updateTable("documents").set({ soundUrl: hostile }).where("documentId", "=", doc.documentId).execute();
    }
    try {
      for (const path of [readerPath(), `${readerPath()}/embed`]) {
        const res = await fetch(base + path);
        assert.equal(res.status, 200);
        const csp = parseCsp(res.headers.get("content-security-policy")!);
        assert.deepEqual(
          [...csp.keys()].sort(),
          ["base-uri", "connect-src", "default-src", "form-action", "frame-ancestors", "img-src", "media-src", "object-src", "report-uri", "script-src", "style-src"],
          path,
        );
        assert.deepEqual(csp.get("media-src"), ["'none'"]);
        const body = await res.text();
        assert.doesNotMatch(body, /<audio/, "no player for an address the policy cannot allow");
      }
    } finally {
      await fx.client.ok("document.update", { name: doc.name, soundUrl: "https://sounds.example/intro.mp3" });
    }
    const ok = await fetch(base + readerPath());
    assert.deepEqual(parseCsp(ok.headers.get("content-security-policy")!).get("media-src"), ["https://sounds.example"]);
  });

  test("a plain origin is the only thing taken from a sound address", () => {
    assert.equal(plainHttpOrigin("https://Sounds.Example:8443/a/b.mp3?x=1"), "https://sounds.example:8443");
    assert.equal(plainHttpOrigin("http://[::1]:8080/a.mp3"), "http://[::1]:8080");
    // Spelled as a URL reads it (a scheme in capitals, space before it).
    assert.equal(plainHttpOrigin(" HTTPS://sounds.example/a.mp3"), "https://sounds.example");
    for (const bad of ["http://x;sandbox/a.mp3", "http://x,y/a.mp3", "javascript:alert(1)//a.mp3", "data:audio/mp3,x", "http://a'b/a.mp3", "not a url", "", "ftp://x/a.mp3", "//x/a.mp3"]) {
      assert.equal(plainHttpOrigin(bad), undefined, bad);
    }
  });

  test("a Host not configured appears in no sitemap, robots.txt, canonical or OpenGraph link", async () => {
    const page = await getWithHost(base, readerPath(), EVIL);
    assert.equal(page.status, 200);
    assert.ok(!page.body.includes(EVIL), "the reader names no unchecked host");
    assert.match(page.body, new RegExp(`<link rel="canonical" href="/tester/docs/${doc.name}">`), "a relative canonical link instead");
    assert.doesNotMatch(page.body, /og:url|og:image|twitter:image/, "absolute-only tags are left out");
    assert.match(page.body, /<meta property="og:title"/, "the rest of the sharing card stays");
    const profile = await getWithHost(base, "/tester", EVIL);
    assert.ok(!profile.body.includes(EVIL));
    assert.match(profile.body, /<link rel="canonical" href="\/tester">/);

    const robots = await getWithHost(base, "/robots.txt", EVIL);
    assert.equal(robots.status, 200);
    assert.ok(!robots.body.includes(EVIL));
    assert.doesNotMatch(robots.body, /Sitemap:/, "no sitemap line without a trusted address");
    const sitemap = await getWithHost(base, "/sitemap.xml", EVIL);
    assert.equal(sitemap.status, 404);
    assert.ok(!sitemap.body.includes(EVIL));
  });

  test("after an evil Host, a configured one gets its own links, and the evil one never reappears", async () => {
    for (const path of ["/robots.txt", "/sitemap.xml", readerPath(), "/tester"]) await getWithHost(base, path, EVIL);
    const robots = await getWithHost(base, "/robots.txt", GOOD);
    assert.equal(robots.body, `User-agent: *\nAllow: /\nDisallow: /*/download\nSitemap: http://${GOOD}/sitemap.xml\n`);
    const sitemap = await getWithHost(base, "/sitemap.xml", GOOD);
    assert.equal(sitemap.status, 200);
    assert.ok(sitemap.body.includes(`<loc>http://${GOOD}/tester/docs/${doc.name}</loc>`));
    assert.ok(!sitemap.body.includes(EVIL));
    const page = await getWithHost(base, readerPath(), `${GOOD}:8080`);
    assert.ok(!page.body.includes(EVIL));
    assert.match(page.body, new RegExp(`<link rel="canonical" href="http://${GOOD}:8080/tester/docs/${doc.name}">`));
    assert.match(page.body, new RegExp(`<meta property="og:url" content="http://${GOOD}:8080/tester/docs/${doc.name}">`));
    assert.match(page.body, new RegExp(`<meta property="og:image" content="http://${GOOD}:8080/tester/docs/${doc.name}/cover/large\\.jpg\\?v=`));
    // The evil host again, after the good one: still nothing of either.
    const again = await getWithHost(base, readerPath(), EVIL);
    assert.ok(!again.body.includes(EVIL) && !again.body.includes(GOOD));
  });

  test("the configured public address wins over any Host; a Host is trusted only when listed", () => {
    const req = (host: string) => ({ protocol: "http", host });
    assert.equal(publicOrigin({ publicUrl: "https://docs.example", allowedHosts: [] }, req(EVIL)), "https://docs.example");
    assert.equal(publicOrigin({ publicUrl: undefined, allowedHosts: [] }, req(EVIL)), undefined);
    assert.equal(publicOrigin({ publicUrl: undefined, allowedHosts: [GOOD] }, req("GOOD.example:81")), "http://good.example:81");
    assert.equal(publicOrigin({ publicUrl: undefined, allowedHosts: [`${GOOD}:81`] }, req(`${GOOD}:82`)), undefined);
    assert.equal(publicOrigin({ publicUrl: undefined, allowedHosts: [GOOD] }, req(`${GOOD}/x`)), undefined);
    assert.equal(publicOrigin({ publicUrl: undefined, allowedHosts: [GOOD] }, req(`${GOOD}.evil.example`)), undefined);
  });
});
