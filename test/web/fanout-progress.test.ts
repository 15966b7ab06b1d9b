import assert from "node:assert/strict";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { planPageRanges } from "../../src/domain/job-kinds.ts";
import { launchChromium, newContext, watchedPage } from "../helpers/browser.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Issue 16, item 2: the "being processed" page of a document converted as page ranges says how many
 * of its pages are ready, and keeps that figure up to date; the pages themselves stay unpublished
 * until the document is A. No worker runs here: the ranges' progress is written through the store,
 * as their jobs write it. QUIRE_SCREENSHOTS=<dir> also saves the page at a wide and a phone size.
 */

let server: TestServer;
let browser: Browser | undefined;
let doc: DocumentRecord;
let rangeJobs: number[];

before(async () => {
  server = await startTestServer();
  const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
  const id = (unwrap(await client.upload(join(FIXTURES, "pdf-tcpdf-14pages.pdf"), { title: "Free Culture" })).document as { documentId: string }).documentId;
  const { store } = server.services;
  doc = (await store.documents.getForConversion(id))!;
  // Split as the document's job would split a 352-page book.
  const plan = { documentId: id, accountId: doc.accountId, pageCount: 352, pdfKey: blobKeys.original(doc.blobId), textLayerIsOurs: false, ranges: planPageRanges(352, 24) };
  assert.equal(await store.pageRanges.fanOut(plan, Date.now()), true);
  assert.equal(await store.pageRanges.fanOut(plan, Date.now()), false, "split once");
  rangeJobs = (await store.jobs.getForDocument(id)).filter((j) => j.kind === "convert-pages").map((j) => j.id);
  for (const job of rangeJobs.slice(0, 5)) await store.pageRanges.recordPagesReady(job, 24);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const get = (path: string) => fetch(server.url + path);
const docPage = () => `/tester/docs/${doc.name}`;

describe("the page of a document being converted as page ranges", { timeout: 60_000 }, () => {
  test("says how many pages are ready, as does state.json", async () => {
    const page = await (await get(docPage())).text();
    assert.match(page, /<progress max="352" value="120"/);
    assert.match(page, /120 of 352 pages ready/);
    assert.deepEqual(await (await get(`${docPage()}/state.json`)).json(), { state: "P", pageCount: 352, pagesReady: 120 });
  });

  test("a figure never goes back, nor past the document's pages", async () => {
    const { pageRanges } = server.services.store;
    await pageRanges.recordPagesReady(rangeJobs[0]!, 3); // the range run again after a crash
    assert.equal((await pageRanges.progress(doc.documentId))!.pagesReady, 120);
    await pageRanges.recordPagesReady(rangeJobs[5]!, 10_000);
    assert.equal((await pageRanges.progress(doc.documentId))!.pagesReady, 352);
    await dbOf(server.services.store).updateTable("pageRanges").set({ pagesReady: 0 }).where("jobId", "=", rangeJobs[5]!).execute();
  });

  test("its pages are not served before A, though some are stored", async () => {
    await server.services.blobs.put(blobKeys.page(doc.blobId, 1, "read", "jpg"), Readable.from([Buffer.from("not yet")]));
    assert.equal((await get(`${docPage()}/pages/read/1.jpg`)).status, 404);
    assert.equal((await get(`${docPage()}/text.json`)).status, 404);
  });

  test("in a browser, the figure follows the ranges without a reload", async () => {
    browser = await launchChromium();
    const context = await newContext(browser);
    const { page, watch } = await watchedPage(context, server.url);
    await page.goto(server.url + docPage());
    const figure = page.locator("[data-role=pages-ready]");
    assert.equal(await figure.textContent(), "120 of 352 pages ready");
    await server.services.store.pageRanges.recordPagesReady(rangeJobs[5]!, 24);
    await page.waitForFunction(() => document.querySelector("[data-role=pages-ready]")?.textContent === "144 of 352 pages ready", undefined, { timeout: 20_000 });
    assert.equal(await page.locator("progress").getAttribute("max"), "352");
    assert.equal(await page.evaluate(() => (document.querySelector("progress") as HTMLProgressElement).value), 144);
    assert.deepEqual(watch.errors, []);
    const dir = process.env.QUIRE_SCREENSHOTS;
    if (dir) {
      await page.screenshot({ path: join(dir, "processing-wide.png"), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(dir, "processing-phone.png"), fullPage: true });
    }
    await context.close();
  });
});
