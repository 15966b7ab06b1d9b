import assert from "node:assert/strict";
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import type { FastifyRequest } from "fastify";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { anonymousBudget } from "../../src/web/anonymous-budget.ts";
import { readerVariant } from "../../src/web/reader-address.ts";
import { READER_FIXTURE, READER_FIXTURE_PAGES, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/**
 * Issue 23 items 1 and 2: the reader's cache cannot be filled with spellings of one page, and
 * the costly anonymous pages have a budget per client address. Clients are told apart by the
 * local address they connect from (127.0.0.2, 127.0.0.3…), as the server sees them.
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One GET from `localAddress`, redirects not followed. */
function get(base: string, path: string, localAddress = "127.0.0.1"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(base + path, { localAddress, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on("error", reject).end();
  });
}

describe("reader addresses and the anonymous budget", () => {
  let web: WebFixture;
  let doc: DocumentRecord;
  let path: string;
  const at = (p: string, from?: string) => get(web.server.url, p, from);

  before(async () => {
    // A budget of 8 per address that drains one request per 1,000 s: nothing comes back during the test.
    web = await startWebFixture({ QUIRE_ANONYMOUS_BURST: "8", QUIRE_ANONYMOUS_PER_SECOND: "0.001" });
    doc = await web.publish(READER_FIXTURE, { title: "Budget" });
    assert.equal(doc.state, "A");
    path = `/${doc.username}/docs/${doc.name}`;
  });
  after(() => web.close());

  test("non-canonical reader addresses redirect to the one address of their page, and build nothing new", async () => {
    const from = "127.0.0.10";
    const last = READER_FIXTURE_PAGES;
    // Each variant's canonical address, and whether it follows from the address alone (301) or from the document (302).
    const cases: Array<[string, string, 301 | 302]> = [
      ["?page=007", "?page=7", 301],
      ["?page=0007&q=", "?page=7", 301],
      ["?page=abc1", "", 301],
      ["?page=-2", "", 301],
      ["?page=1", "", 301],
      ["?page=0", "", 301],
      ["?page=2&page=3", "?page=2", 301],
      [`?page=${last + 1}`, `?page=${last}`, 302],
      ["?page=99999999999", `?page=${last}`, 302],
      ["?q=%20%20", "", 301],
      ["?q=+%09+", "", 301],
      ["?q=%20storm%20%20front%20", "?q=storm+front", 301],
      ["?q=storm%20front&page=7", "?page=7&q=storm+front", 301],
      ["?consent=yes", "", 301],
      ["?consent=1&page=7", "?page=7&consent=1", 301],
      ["?embed=1", "", 301],
      ["/embed?embed=424242&page=3", "/embed?page=3", 302],
    ];
    const canonical = new Set(cases.map(([, to]) => to).filter((to) => !to.includes("q=")));
    // The canonical pages, built once each.
    for (const to of canonical) {
      const first = await at(path + to, from);
      assert.equal(first.status, 200, to);
      assert.equal(first.headers["x-cache"], "miss", `${to} is built the first time`);
    }
    for (const [variant, to, code] of cases) {
      const res = await at(path + variant, from);
      assert.equal(res.status, code, variant);
      assert.equal(res.headers.location, path + to, variant);
      if (code === 302) assert.equal(res.headers["cache-control"], "no-cache", `${variant}: not kept, the document decides`);
      if (to.includes("q=")) continue; // a reader's search is built for each request, never kept
      const landed = await at(path + to, from);
      assert.equal(landed.status, 200, to);
      assert.equal(landed.headers["x-cache"], "hit", `${variant} leads to the page already built`);
    }
    // Parameters the reader does not read change nothing: no redirect, no new page.
    const other = await at(`${path}?utm_source=x&page=7`, from);
    assert.equal(other.status, 200);
    assert.equal(other.headers["x-cache"], "hit");
    // Every one of these requests came from one address, yet only the canonical builds took from its budget.
    assert.ok(canonical.size < 8, "the builds stayed within the budget");
  });

  test("a reader's search, built and compressed in its thread, is the same page in every encoding", async () => {
    const url = `${web.server.url}${path}?q=courier`;
    const plain = await fetch(url, { headers: { "accept-encoding": "identity" } });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get("x-cache"), "miss", "a search is built for its reader");
    const body = await plain.text();
    assert.match(body, /with “courier”:<\/p><ol><li>/, "the hits, found in the thread");
    for (const encoding of ["br", "gzip"] as const) {
      const res = await new Promise<{ headers: Record<string, unknown>; bytes: Buffer }>((resolve, reject) => {
        request(url, { headers: { "accept-encoding": encoding }, agent: false }, (r) => {
          const chunks: Buffer[] = [];
          r.on("data", (c: Buffer) => chunks.push(c)).on("end", () => resolve({ headers: r.headers, bytes: Buffer.concat(chunks) }));
        }).on("error", reject).end();
      });
      assert.equal(res.headers["content-encoding"], encoding);
      const decoded = encoding === "br" ? brotliDecompressSync(res.bytes) : gunzipSync(res.bytes);
      assert.equal(decoded.toString("utf8"), body, encoding);
    }
  });

  test("the canonical form of a variant: clamped page, collapsed query, known embed only", async () => {
    const embeds = async (id: number) => (id === 5 ? 3 : undefined);
    const v = (q: Record<string, string>, embed = false) => readerVariant(q, 14, embed ? embeds : undefined);
    assert.deepEqual(await v({ page: "007" }), { startPage: 7, query: "", embedId: undefined, consented: false, search: "page=7", permanent: true });
    assert.equal((await v({ page: "15" })).search, "page=14");
    assert.equal((await v({ page: "15" })).permanent, false);
    assert.equal((await v({ q: " a\u3000 b\n" })).search, "q=a+b");
    assert.equal((await v({ q: "x".repeat(500) })).query.length, 200);
    assert.deepEqual(await v({ embed: "5", page: "9" }, true), { startPage: 3, query: "", embedId: 5, consented: false, search: "embed=5&page=3", permanent: true });
    assert.equal((await v({ embed: "6", page: "9" }, true)).search, "page=9");
    assert.equal((await v({ embed: "1234567890" }, true)).search, "", "an id longer than any embed's is not looked up");
    assert.equal((await v({ embed: "5" })).search, "", "embed means nothing on the reader's own address");
  });

  test("past its budget an address gets 429 with Retry-After on every costly page; another address is served", async () => {
    const from = "127.0.0.2";
    for (let i = 0; i < 8; i++) assert.equal((await at(`/search?q=word${i}`, from)).status, 200, `search ${i + 1} of 8`);
    const refused = await at("/search?q=one+more", from);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers["retry-after"]) >= 1, "says when to come back");
    assert.match(String(refused.headers["content-type"]), /^text\/html/);
    assert.match(refused.body, /<h1>Too many requests<\/h1>/);
    assert.equal(refused.headers["cache-control"], "no-store");

    const reader = await at(`${path}?q=type`, from);
    assert.equal(reader.status, 429, "a reader's search");
    assert.match(reader.body, /Too many requests/);
    const profile = await at(`/${doc.username}?q=type`, from);
    assert.equal(profile.status, 429, "an account's search");
    const json = await at(`${path}/search.json?q=type`, from);
    assert.equal(json.status, 429);
    assert.match(String(json.headers["content-type"]), /^application\/json/);
    assert.equal(JSON.parse(json.body).retryAfter, Number(json.headers["retry-after"]));
    assert.equal((await at(`${path}/text.json`, from)).status, 429, "the whole text");
    const oembed = await at(`/oembed?url=${encodeURIComponent(`http://127.0.0.1${path}`)}`, from);
    assert.equal(oembed.status, 429);
    assert.match(String(oembed.headers["content-type"]), /^text\/plain/);
    assert.equal((await at(`${path}?page=12`, from)).status, 429, "a page the cache does not hold yet");

    // What costs nothing is never refused: a page already built, the empty search box, the page images.
    const built = await at(path, from);
    assert.equal(built.status, 200);
    assert.equal(built.headers["x-cache"], "hit");
    assert.equal((await at("/search", from)).status, 200);
    assert.equal((await at(`${path}?page=abc`, from)).status, 301, "a redirect is cheap, and told as usual");

    // Another address has its own budget.
    for (const p of ["/search?q=one+more", `${path}?q=type`, `${path}/search.json?q=type`, `${path}/text.json`]) {
      assert.equal((await at(p, "127.0.0.3")).status, 200, p);
    }
  });

  test("an IPv6 client is counted by its /64; its neighbour /64 by its own", () => {
    const budget = anonymousBudget({ burst: 1, perSecond: 0.001 });
    const req = (ip: string) => ({ ip }) as FastifyRequest;
    assert.equal(budget.take(req("2001:db8:1:2::1")), undefined);
    assert.ok(budget.take(req("2001:db8:1:2:ffff:1:2:3"))! >= 1, "the same /64");
    assert.equal(budget.take(req("2001:db8:1:3::1")), undefined, "the next /64");
    assert.equal(budget.take(req("::ffff:10.0.0.1")), undefined);
    assert.ok(budget.take(req("10.0.0.1"))! >= 1, "an IPv4-mapped address is its IPv4 address");
  });

  test("a budget of 0 per second is no budget", () => {
    const budget = anonymousBudget({ burst: 1, perSecond: 0 });
    for (let i = 0; i < 100; i++) assert.equal(budget.take({ ip: "10.0.0.9" } as FastifyRequest), undefined);
  });
});
