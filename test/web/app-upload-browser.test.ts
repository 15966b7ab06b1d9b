import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { appAccount, signInBrowser } from "../helpers/app-client.ts";
import { launchChromium, newContext, seriousViolations, appScreenshot, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/** The app's upload page in Debian's Chromium, against the real pipeline (issue 14 item 3, "Must show"). */

const PDFS = ["pdf-quartz-firefox-1page.pdf", "pdf-rotated-page.pdf", "pdf-acrobat9-fonts-not-embedded.pdf"];
/** A small limit, so a file beyond it is cheap to make; the PDFs are far below it. */
const MAX_BYTES = 2 * 1024 * 1024;

describe("upload page in a real browser", { timeout: 200_000 }, () => {
  let server: TestServer;
  let worker: TestWorker;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  let accountId: number;

  before(async () => {
    [server, browser] = await Promise.all([
      startTestServer({ QUIRE_PASSWORD_HASH_COST: "12", QUIRE_MAX_UPLOAD_BYTES: String(MAX_BYTES) }),
      launchChromium(),
    ]);
    worker = await startTestWorker(server, { startOffice: false, maxAttempts: 1 });
    accountId = await appAccount(server, "tester");
    context = await newContext(browser);
    ({ page, watch } = await watchedPage(context, server.url));
    await signInBrowser(page, server.url, "tester");
  });
  after(async () => {
    await browser?.close();
    await worker?.stop();
    await server?.close();
  });

  const rows = () =>
    page.$$eval(".upload-item", (items) =>
      items.map((li) => ({
        name: li.querySelector(".upload-name")!.textContent,
        phase: li.getAttribute("data-phase"),
        status: li.querySelector(".upload-status")!.textContent,
        bar: (li.querySelector("progress") as HTMLProgressElement).value,
      })),
    );

  test("three PDFs at once go live, each with its own bar; a file that is no document and one too large are refused in words; a PNG named .pdf is published as the PNG it is, and says so", async () => {
    // Listened for before the page loads: Playwright turns the browser's file-chooser interception on
    // without waiting for it, so a listener added just before the key press can miss the picker.
    const picked = page.waitForEvent("filechooser", { timeout: 60_000 });
    await page.goto(`${server.url}/app/upload`);
    // Keyboard alone: Tab to "Choose files", Enter opens the picker.
    await page.focus("#u-url");
    await page.keyboard.press("Shift+Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Choose files");
    await page.keyboard.press("Enter");
    const chooser = await picked;
    const zip = await readFile(join(FIXTURES, "bad", "hello.zip"));
    await chooser.setFiles([
      ...(await Promise.all(PDFS.map(async (f) => ({ name: f, mimeType: "application/pdf", buffer: await readFile(join(FIXTURES, f)) })))),
      // Named like a PDF, but its content is a zip archive: the format comes from the content.
      { name: "scan.pdf", mimeType: "application/pdf", buffer: zip },
      { name: "huge.pdf", mimeType: "application/pdf", buffer: Buffer.alloc(MAX_BYTES + 1) },
      // A picture named like a PDF: decisions §5, the content decides; the person is told.
      { name: "photo.pdf", mimeType: "application/pdf", buffer: await readFile(join(FIXTURES, "img-photo-tika.png")) },
    ]);
    assert.equal((await rows()).length, 6);
    // The batch's details, then Upload, by keyboard too.
    await page.fill("#u-tags", "batch, <b>tag</b>");
    await page.focus('[data-role="submit"]');
    await page.keyboard.press("Enter");

    await page.waitForFunction(() => [...document.querySelectorAll(".upload-item")].every((li) => !["waiting", "uploading", "converting"].includes(li.getAttribute("data-phase")!)), undefined, { timeout: 150_000, polling: 250 });
    const done = await rows();
    for (const name of PDFS) {
      const r = done.find((x) => x.name === name)!;
      assert.equal(r.phase, "live", `${name}: ${r.status}`);
      assert.equal(r.bar, 100);
      assert.match(r.status!, /^Published\. Open$/);
    }
    const scan = done.find((x) => x.name === "scan.pdf")!;
    assert.equal(scan.phase, "refused");
    assert.equal(scan.status, "Refused: This file is not in a format Quire can publish.");
    const photo = done.find((x) => x.name === "photo.pdf")!;
    assert.equal(photo.phase, "live", photo.status);
    assert.equal(photo.status, "Published. It is a PNG file, whatever its name says (PDF), and is published as one. Open");
    const huge = done.find((x) => x.name === "huge.pdf")!;
    assert.equal(huge.phase, "refused");
    assert.equal(huge.status, "Refused: The file is larger than the 2 MiB this server accepts.");

    const docs = (await server.services.store.documents.list({ accountId, sortBy: "title", order: "asc", startIndex: 0, pageSize: 10 })).records;
    assert.deepEqual(
      docs.map((d) => [d.orgDocName, d.orgDocType, d.state, d.tags.join("|")]).sort(),
      [...PDFS.map((f) => [f, "pdf", "A", "batch|<b>tag</b>"]), ["photo.pdf", "png", "A", "batch|<b>tag</b>"]].sort(),
    );
    // The links go to each document's page of the app.
    const href = await page.getAttribute(".upload-item[data-phase=live] .upload-status a", "href");
    assert.match(href!, /^\/app\/documents\/\d{12}-[0-9a-f]{32}$/);
    // Chromium logs every refused request (400) as an error; nothing else may be there.
    assert.deepEqual(watch.errors.filter((e) => !/status of 400/.test(e)), []);
    assert.deepEqual(watch.foreignRequests, []);
  });

  test("a cancelled upload leaves nothing behind; an address is taken like the API's url_upload", async () => {
    await page.goto(`${server.url}/app/upload`);
    const before = await server.countRecords();
    await page.evaluate(() => {
      // A file chosen, then cancelled before Upload: it is never sent.
      const file = new File(["%PDF-1.4\n"], "never.pdf", { type: "application/pdf" });
      (window as unknown as { quireUpload: { choose(f: File[]): void } }).quireUpload.choose([file]);
    });
    await page.click(".upload-item .upload-cancel");
    assert.equal((await rows())[0]!.phase, "cancelled");
    await page.fill("#u-url", "https://example.com/files/report.pdf");
    await page.click('[data-role="submit"]');
    await page.waitForSelector(".upload-item:nth-child(2)[data-phase=converting]");
    assert.deepEqual(await server.countRecords(), { documents: before.documents + 1, jobs: before.jobs + 1 });
  });

  test("axe finds nothing serious, wide or on a phone, where the page fits the screen", async () => {
    // axe is injected, which the strict CSP forbids: these contexts bypass it (the others keep it).
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      const ctx = await newContext(browser, { viewport, bypassCSP: true, isMobile: viewport.width < 500, hasTouch: viewport.width < 500 });
      const p = await ctx.newPage();
      await signInBrowser(p, server.url, "tester");
      await p.goto(`${server.url}/app/upload`);
      await p.setInputFiles('[data-role="files"]', [
        { name: "pdf-rotated-page.pdf", mimeType: "application/pdf", buffer: await readFile(join(FIXTURES, "pdf-rotated-page.pdf")) },
        { name: "huge.pdf", mimeType: "application/pdf", buffer: Buffer.alloc(MAX_BYTES + 1) },
      ]);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${viewport.width}px: scrolls sideways by ${overflow}px`);
      assert.deepEqual(await seriousViolations(p), [], `${viewport.width}px`);
      await appScreenshot(p, viewport.width < 500 ? "upload-phone" : "upload");
      await ctx.close();
    }
  });
});
