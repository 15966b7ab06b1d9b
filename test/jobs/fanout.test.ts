import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { text as readAll } from "node:stream/consumers";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import type { PageText } from "../../src/convert/pdf-pages.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { planPageRanges } from "../../src/domain/job-kinds.ts";
import { boundDocumentText } from "../../src/jobs/split-publish.ts";
import { numberedPagesPdf } from "../helpers/numbered-pages-pdf.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/**
 * Issue 16, item 1: a document above QUIRE_FANOUT_MIN_PAGES is converted as page-range jobs
 * (here: more than 5 pages, ranges of 4), published once its last range is done; a short one keeps
 * its one job; a range that fails for good fails the document with its code.
 */

let server: TestServer;
let worker: TestWorker;
let client: QuireClient;

before(async () => {
  server = await startTestServer({ QUIRE_FANOUT_MIN_PAGES: "5", QUIRE_FANOUT_RANGE_PAGES: "4", QUIRE_RENDER_PROCESSES: "1", QUIRE_OCR_CONCURRENCY: "1" });
  worker = await startTestWorker(server, { startOffice: false, concurrency: 2 });
  client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
});
after(async () => {
  await worker?.stop();
  await server?.close();
});

async function upload(name: string, pdf: Buffer): Promise<string> {
  const path = join(server.dataDir, name);
  await writeFile(path, pdf);
  return (unwrap(await client.upload(path)).document as { documentId: string }).documentId;
}

async function final(documentId: string): Promise<DocumentRecord> {
  for (let i = 0; ; i++) {
    const doc = (await server.services.store.documents.getForConversion(documentId))!;
    if (doc.state !== "P") return doc;
    assert.ok(i < 1200, "the document never left P");
    await sleep(50);
  }
}

/** Until no job of the document is queued or running (the worker ends a job just after its work). */
async function settledJobs(documentId: string) {
  for (let i = 0; ; i++) {
    const jobs = await server.services.store.jobs.getForDocument(documentId);
    if (jobs.every((j) => j.state === "done" || j.state === "failed")) return jobs;
    assert.ok(i < 600, "jobs never settled");
    await sleep(50);
  }
}

describe("page-range jobs", { timeout: 60_000 }, () => {
  test("a long document is split into ranges and published once, with every page in order", async () => {
    const id = await upload("long.pdf", numberedPagesPdf(10));
    const doc = await final(id);
    assert.equal(doc.state, "A", doc.errorMessage);
    assert.equal(doc.pageCount, 10);
    assert.ok(doc.coverWidth > 0 && doc.coverHeight > 0, "covers from the range of page 1");
    assert.match(doc.description, /^Page 1 of the book Page 2/);
    const jobs = await settledJobs(id);
    assert.deepEqual(jobs.map((j) => [j.kind, j.state]), [
      ["convert-document", "done"],
      ...planPageRanges(10, 4).map(() => ["convert-pages", "done"]),
      ["convert-document", "done"],
    ]);
    const { blobs, store } = server.services;
    const keys = await blobs.list(blobKeys.prefix(doc.blobId));
    assert.equal(keys.filter((k) => k.includes("/pages/read/")).length, 10);
    assert.equal(keys.filter((k) => k.includes("/pages/thumb/")).length, 0, "thumbnails are variants, made on request");
    assert.equal(keys.filter((k) => /\/pages\/w\d+\/1\.webp$/.test(k)).length, 5, "page 1's variants are made with it, once");
    assert.equal(keys.filter((k) => k.includes("/cover-")).length, 3);
    assert.deepEqual(keys.filter((k) => k.includes("/ranges/")), [], "the ranges' texts are gone once put together");
    const text = JSON.parse(await readAll(await blobs.get(blobKeys.text(doc.blobId)))) as PageText[];
    assert.deepEqual(text.map((p) => p.page), Array.from({ length: 10 }, (_, i) => i + 1));
    for (const p of text) assert.equal(p.text, `Page ${p.page}\nof the book`);
    assert.equal(await store.pageRanges.progress(id), undefined, "the split is forgotten once published");
  });

  test("a short document keeps its one job", async () => {
    const id = await upload("short.pdf", numberedPagesPdf(5));
    const doc = await final(id);
    assert.equal(doc.state, "A", doc.errorMessage);
    assert.equal(doc.pageCount, 5);
    const jobs = await settledJobs(id);
    assert.deepEqual(jobs.map((j) => [j.kind, j.state]), [["convert-document", "done"]]);
  });

  test("a range that fails for good fails the document with its code; the other ranges stop and nothing but the original stays", async () => {
    const id = await upload("huge-page.pdf", numberedPagesPdf(10, { hugePage: 10 }));
    const doc = await final(id);
    assert.equal(doc.state, "F");
    assert.equal(doc.errorCode, 5, doc.errorMessage);
    assert.match(doc.errorMessage, /Page 10 is too large/);
    const jobs = await settledJobs(id);
    assert.equal(jobs[0]!.kind, "convert-document");
    assert.equal(jobs[0]!.state, "done", "the document's own job split it and ended");
    assert.ok(jobs.slice(1).every((j) => j.kind === "convert-pages"));
    assert.ok(jobs.some((j) => j.kind === "convert-pages" && j.state === "failed"));
    let keys: string[] = [];
    for (let i = 0; i < 200; i++) {
      keys = await server.services.blobs.list(blobKeys.prefix(doc.blobId));
      if (keys.length === 1) break;
      await sleep(50);
    }
    assert.deepEqual(keys, [blobKeys.original(doc.blobId)]);
    // Issue 23 item 0d: the split's rows go with the failure (its page_fanouts row and, by cascade, its ranges).
    assert.equal(await server.services.store.pageRanges.getFanout(id), undefined, "no page_fanouts row is left");
    assert.deepEqual(await server.services.store.pageRanges.ranges(id), [], "no page_ranges row is left");
  });
});

test("ranges: even, the short tail joins the range before it", () => {
  assert.deepEqual(planPageRanges(8, 4), [{ first: 1, last: 4 }, { first: 5, last: 8 }]);
  assert.deepEqual(planPageRanges(9, 4), [{ first: 1, last: 4 }, { first: 5, last: 9 }]);
  assert.deepEqual(planPageRanges(10, 4), [{ first: 1, last: 4 }, { first: 5, last: 8 }, { first: 9, last: 10 }]);
  assert.deepEqual(planPageRanges(3, 24), [{ first: 1, last: 3 }]);
  assert.equal(planPageRanges(2000, 24).length, 83);
});

test("the document's text bound holds across ranges", () => {
  const word = (text: string) => ({ text, x: 0, y: 0, w: 0, h: 0 });
  const pages: PageText[] = [
    { page: 1, text: "aaaa bbbb", words: [word("aaaa"), word("bbbb")] },
    { page: 2, text: "cccc\ndddd", words: [word("cccc"), word("dddd")] },
    { page: 3, text: "eeee", words: [word("eeee")] },
  ];
  const bounded = boundDocumentText(pages, 15);
  assert.deepEqual(bounded.map((p) => p.text), ["aaaa bbbb", "cccc", ""]);
  assert.equal(boundDocumentText(pages, 1000)[1], pages[1], "untouched when it fits");
});
