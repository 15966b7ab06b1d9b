import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { syncBuiltinESMExports } from "node:module";
import zlib from "node:zlib";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { writeDenseTextPdf } from "../helpers/dense-text-pdf.ts";
import { READER_FIXTURE, READER_FIXTURE_PAGES, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

const PAGE_CHARS = 10_000;
const DOCUMENT_CHARS = 150_000;
const PAGES = 40;

/** A raw GET (fetch would decompress): status, headers and the bytes as sent. */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject).end();
  });
}

const unescape = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, "`").replace(/&amp;/g, "&");

/** The text of each page as the reader's HTML carries it. */
function pageTexts(html: string): string[] {
  return [...html.matchAll(/<figcaption class="page-text"><span class="page-label">Page \d+<\/span>(?:<span class="page-words">([^<]*)<\/span>)?<\/figcaption>/g)].map((m) => unescape(m[1] ?? ""));
}

/** Issue 11 item 4: a small PDF with a huge text keeps anonymous reading cheap. */
describe("a document with a huge text", { timeout: 600_000 }, () => {
  let fx: WebFixture;
  let doc: DocumentRecord;
  let legacy: DocumentRecord;
  let scratch: string;
  let base: string;
  const readerUrl = (d: DocumentRecord) => `${base}/${d.username}/docs/${d.name}`;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), "quire-large-text-"));
    fx = await startWebFixture({ QUIRE_TEXT_MAX_PAGE_CHARS: String(PAGE_CHARS), QUIRE_TEXT_MAX_DOCUMENT_CHARS: String(DOCUMENT_CHARS) });
    base = fx.server.url;
    const pdf = join(scratch, "dense.pdf");
    const made = await writeDenseTextPdf(pdf, { pages: PAGES });
    assert.ok(made.bytes < 50_000 && made.textChars > 1_900_000, `${made.bytes} bytes, ${made.textChars} characters`);
    doc = await fx.publish(pdf, { title: "Dense text" });
    assert.equal(doc.state, "A", `${doc.errorCode} ${doc.errorMessage}`);
    legacy = await fx.publish(READER_FIXTURE, { title: "Written before the bound" });
    assert.equal(legacy.state, "A");
  });
  after(async () => {
    await fx?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  test("the text kept at extraction is bounded per page and per document", async () => {
    const chunks: Buffer[] = [];
    for await (const c of await fx.server.services.blobs.get(blobKeys.text(doc.blobId))) chunks.push(c as Buffer);
    const stored = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Array<{ page: number; text: string; words: Array<{ text: string }> }>;
    assert.equal(stored.length, PAGES);
    const wordChars = stored.map((p) => p.words.reduce((n, w) => n + w.text.length + 1, 0));
    assert.ok(wordChars.every((n) => n <= PAGE_CHARS), "per page");
    assert.ok(wordChars[0]! > PAGE_CHARS - 100, "the first page is cut at the bound, not empty");
    const total = wordChars.reduce((a, b) => a + b, 0);
    assert.ok(total <= DOCUMENT_CHARS && total > DOCUMENT_CHARS - PAGE_CHARS, `per document: ${total}`);
    assert.equal(stored.at(-1)!.words.length, 0, "pages past the document's bound keep no text");
    // Their text layer was there: nothing was sent to OCR, and the extraction's mark is not stored.
    assert.ok(stored.every((p) => !("clipped" in p)));
  });

  test("the reader page is served with every page and the bounded text", async () => {
    const res = await rawGet(readerUrl(doc));
    assert.equal(res.status, 200);
    const html = res.body.toString("utf8");
    assert.equal(html.match(/<figure class="page( shown)?"/g)?.length, PAGES);
    const texts = pageTexts(html);
    assert.equal(texts.length, PAGES);
    assert.ok(texts.every((t) => t.length <= PAGE_CHARS));
    assert.ok(texts[0]!.startsWith("lorem ipsum dolor"));
    const total = texts.reduce((n, t) => n + t.length, 0);
    assert.ok(total > 0 && total <= DOCUMENT_CHARS, `${total}`);
    // The text layer comes a page at a time, bounded likewise; the search runs on the same text.
    const page1 = JSON.parse((await rawGet(`${readerUrl(doc)}/text/1.json`)).body.toString("utf8")) as { page: number; words: Array<{ text: string }> };
    assert.equal(page1.page, 1);
    assert.ok(page1.words.length > 0 && page1.words.reduce((n, w) => n + w.text.length + 1, 0) <= PAGE_CHARS);
    assert.equal((await rawGet(`${readerUrl(doc)}/text/${PAGES + 1}.json`)).status, 404);
    assert.equal((await rawGet(`${readerUrl(doc)}/text/0.json`)).status, 404);
    const search = JSON.parse((await rawGet(`${readerUrl(doc)}/search.json?q=Tempor`)).body.toString("utf8")) as { hits: Array<{ page: number }> };
    assert.ok(search.hits.length > 0 && search.hits.length < PAGES);
    assert.equal(search.hits[0]!.page, 1);
  });

  test("a stored text written before the bound is bounded when read, off the event loop", async () => {
    // What an older conversion left: far over both bounds, big enough to be parsed in a worker thread.
    const huge = Array.from({ length: READER_FIXTURE_PAGES }, (_, i) => ({
      page: i + 1,
      text: "x".repeat(400_000),
      words: Array.from({ length: 20_000 }, () => ({ text: "word", x: 0.1, y: 0.1, w: 0.1, h: 0.01 })),
    }));
    await fx.server.services.blobs.put(blobKeys.text(legacy.blobId), Readable.from([JSON.stringify(huge)]));
    const res = await rawGet(readerUrl(legacy));
    assert.equal(res.status, 200);
    const texts = pageTexts(res.body.toString("utf8"));
    assert.equal(texts.length, READER_FIXTURE_PAGES);
    assert.ok(texts.every((t) => t.length <= PAGE_CHARS));
    assert.equal(texts.reduce((n, t) => n + t.length, 0), Math.min(READER_FIXTURE_PAGES * PAGE_CHARS, DOCUMENT_CHARS));
    const page = JSON.parse((await rawGet(`${readerUrl(legacy)}/text/2.json`)).body.toString("utf8")) as { words: unknown[] };
    assert.ok(page.words.length * 5 <= PAGE_CHARS);
  });

  test("repeated views get the answer built once: same ETag, no rebuild, also when they come together", async () => {
    const url = `${readerUrl(doc)}?page=3`;
    const together = await Promise.all(Array.from({ length: 6 }, () => rawGet(url)));
    assert.deepEqual(together.map((r) => r.status), Array(6).fill(200));
    assert.equal(together.filter((r) => r.headers["x-cache"] === "miss").length, 1, "one build for six concurrent views");
    const again = await rawGet(url);
    assert.equal(again.headers["x-cache"], "hit");
    assert.equal(new Set([...together, again].map((r) => r.headers.etag)).size, 1);
    assert.ok(again.body.equals(together[0]!.body));
    // A parameter the page does not read makes no new answer.
    assert.equal((await rawGet(`${url}&utm_source=x${Date.now()}`)).headers["x-cache"], "hit");
    assert.equal((await rawGet(url, { "if-none-match": String(again.headers.etag) })).status, 304);
    // An update of the document is a new page.
    await fx.client.ok("document.update", { name: doc.name, description: "Now described" });
    const updated = await rawGet(url);
    assert.equal(updated.headers["x-cache"], "miss");
    assert.notEqual(updated.headers.etag, again.headers.etag);
    assert.match(updated.body.toString("utf8"), /Now described/);
  });

  test("large answers are compressed off the event loop, once, and decode to the same page", async () => {
    const url = readerUrl(doc);
    const plain = await rawGet(url, { "accept-encoding": "identity" });
    assert.ok(plain.body.length > 100_000);
    // Any synchronous compression while the pages are answered fails the request (and this test).
    const sync = ["gzipSync", "brotliCompressSync", "deflateSync"] as const;
    const saved = sync.map((name) => zlib[name]);
    const calls: string[] = [];
    for (const name of sync) {
      (zlib as unknown as Record<string, unknown>)[name] = () => {
        calls.push(name);
        throw new Error(`${name} on the event loop`);
      };
    }
    syncBuiltinESMExports();
    try {
      for (const [accept, encoding, decode] of [
        ["gzip", "gzip", zlib.gunzipSync],
        ["gzip, deflate, br", "br", zlib.brotliDecompressSync],
        ["br;q=0, gzip", "gzip", zlib.gunzipSync],
      ] as const) {
        for (let i = 0; i < 2; i++) {
          const res = await rawGet(url, { "accept-encoding": accept });
          assert.equal(res.status, 200);
          assert.equal(res.headers["content-encoding"], encoding, accept);
          assert.equal(res.headers.etag, `${String(plain.headers.etag).slice(0, -1)}-${encoding === "gzip" ? "gz" : "br"}"`);
          assert.ok(decode(res.body).equals(plain.body), `${accept} decodes to the page`);
          assert.ok(res.body.length < plain.body.length / 5);
        }
      }
      const text = await rawGet(`${url}/text/1.json`, { "accept-encoding": "gzip" });
      assert.equal(text.headers["content-encoding"], "gzip");
      assert.ok(JSON.parse(zlib.gunzipSync(text.body).toString("utf8")).words.length > 0);
      // The reader's script, as the page's loader names it.
      const asset = (plain.body.toString("utf8").match(/\/_assets\/reader\.[0-9a-f]{16}\.js/) ?? [])[0]!;
      const script = await rawGet(base + asset, { "accept-encoding": "gzip" });
      assert.equal(script.headers["content-encoding"], "gzip");
    } finally {
      sync.forEach((name, i) => ((zlib as unknown as Record<string, unknown>)[name] = saved[i]));
      syncBuiltinESMExports();
    }
    assert.deepEqual(calls, []);
  });
});
