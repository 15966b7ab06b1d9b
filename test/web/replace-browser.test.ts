import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { utcDay } from "../../src/domain/reader-identity.ts";
import { givePassword, signInBrowser, TEST_APP_ENV } from "../helpers/app-client.ts";
import { launchChromium, newContext, seriousViolations } from "../helpers/browser.ts";
import { fields, fileField, parseRsp, postMultipart, signedUpload } from "../helpers/multipart.ts";
import { numberedPagesPdf } from "../helpers/numbered-pages-pdf.ts";
import { settled, until } from "../helpers/poll.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/** Screenshots of the edit page's Replace file form (looked at before the work was called done). */
const SHOTS = process.env.QUIRE_REPLACE_SCREENSHOTS;
/** Headless Chromium calls itself HeadlessChrome, which the statistics' bot list knows. */
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/**
 * Issue 26 "Must show": a replaced file shows new pages at the same address while embeds and
 * statistics continue. A reader open at the address sees the old pages while the new file converts
 * (the worker is held), then the new ones; an embed on a page of another origin follows; the file is
 * replaced through the app's form in the browser.
 */
describe("replacing a file, seen in a real browser", { timeout: 180_000 }, () => {
  let server: TestServer;
  let worker: TestWorker | undefined;
  let browser: Browser;
  let other: Server;
  let otherOrigin: string;
  let documentId: string;
  let accountId: number;
  const shot = async (p: Page, name: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await writeFile(join(SHOTS, `${name}.png`), await p.screenshot({ fullPage: true }));
  };
  const views = async () => {
    const day = utcDay(Date.now());
    return (await server.services.store.statistics.report({ accountId, documentId, range: { from: day, to: day } })).totals.views;
  };
  /** The reader's pages painted: how many it has and the first image's address. */
  const readerState = async (p: Page) => {
    await p.waitForFunction(() => {
      const shown = [...document.querySelectorAll<HTMLImageElement>(".page.shown img")];
      return document.querySelector<HTMLElement>("#reader")?.dataset.ready === "true" && shown.length > 0 && shown.every((i) => i.complete && i.naturalWidth > 0);
    });
    return p.evaluate(() => ({
      pages: Number(document.querySelector<HTMLElement>("#reader")!.dataset.pages),
      firstImage: document.querySelector<HTMLImageElement>(".page img")!.getAttribute("src")!,
    }));
  };

  before(async () => {
    server = await startTestServer({ ...TEST_APP_ENV });
    await givePassword(server, "tester");
    worker = await startTestWorker(server, { startOffice: false });
    const r = await postMultipart(`${server.uploadUrl}/1_0`, [...fields(signedUpload(server.account, { format: "json", name: "brochure", title: "Brochure" })), fileField(numberedPagesPdf(2), "brochure.pdf")]);
    documentId = String(parseRsp(r, "json").document!.documentId);
    const doc = await settled(server, documentId, 60_000);
    assert.equal(doc.state, "A");
    accountId = doc.accountId;
    browser = await launchChromium();
    // A page of another site with the embed code pasted in.
    other = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><title>Another site</title><iframe id="embed" src="${server.url}/tester/docs/brochure/embed" width="600" height="420"></iframe>`);
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    otherOrigin = `http://localhost:${(other.address() as AddressInfo).port}`;
  });
  after(async () => {
    await worker?.stop();
    await browser?.close();
    await new Promise((r) => other?.close(r));
    await server?.close();
  });

  test("old pages while the new file converts, new ones after, at the same address; the embed and the statistics go on", async () => {
    const address = `${server.url}/tester/docs/brochure`;
    const readers = await newContext(browser, { userAgent: UA });
    const reader = await readers.newPage();
    await reader.goto(address);
    const before = await readerState(reader);
    assert.equal(before.pages, 2);
    const embedPage = await readers.newPage();
    await embedPage.goto(otherOrigin);
    const frame = () => embedPage.frameLocator("#embed");
    await frame().locator(".page.shown img").first().waitFor();
    assert.equal(await frame().locator("#reader").getAttribute("data-pages"), "2");
    // A reader counts once a day (decisions §15): one view so far.
    await until(async () => (await views()) >= 1, 30_000, "the reader's view to be counted");
    const viewsBefore = await views();

    // The publisher replaces the file in the app while no worker runs: the conversion waits.
    await worker!.stop();
    worker = undefined;
    for (const [name, viewport] of [["wide", { width: 1366, height: 850 }], ["phone", { width: 390, height: 844 }]] as const) {
      const ctx = await newContext(browser, { viewport });
      const app = await ctx.newPage();
      await signInBrowser(app, server.url, "tester");
      await app.goto(`${server.url}/app/documents/${documentId}`);
      await app.locator("#replace-file").scrollIntoViewIfNeeded();
      await shot(app, `edit-replace-form-${name}`);
      if (name === "wide") {
        const file = join(tmpdir(), `replace-${process.pid}.pdf`);
        await writeFile(file, numberedPagesPdf(4));
        await app.setInputFiles("#replace-file-input", file);
        await Promise.all([app.waitForURL(/done=replacing/), app.click('#replace-file button[type="submit"]')]);
        assert.match(await app.locator("main").innerText(), /Readers see the current pages until the new ones are ready/);
        assert.match(await app.locator("#replace-file").innerText(), /A new file is converting/);
        assert.deepEqual(await seriousViolations(app).catch(() => []), []);
      } else {
        await app.reload();
      }
      await shot(app, `edit-replace-converting-${name}`);
      await ctx.close();
    }

    // Readers meanwhile: the same pages, the same images.
    await reader.reload();
    const during = await readerState(reader);
    assert.deepEqual(during, before, "the old pages while the new file converts");

    worker = await startTestWorker(server, { startOffice: false });
    await until(async () => (await server.services.store.replacements.get(documentId)) === undefined, 60_000, "the switch");
    await reader.reload();
    const afterSwitch = await readerState(reader);
    assert.equal(reader.url().split("#")[0], address, "the same address");
    assert.equal(afterSwitch.pages, 4, "the new pages");
    assert.notEqual(afterSwitch.firstImage, before.firstImage, "page images under a new version: no cached old image is shown");
    assert.equal(afterSwitch.firstImage.split("?")[0], before.firstImage.split("?")[0], "at the same path");
    const text = await reader.evaluate(async (base) => (await fetch(`${base}/text/4.json?v=x`)).ok, address);
    assert.ok(text, "the new pages' text");

    await embedPage.reload();
    await frame().locator(".page.shown img").first().waitFor();
    assert.equal(await frame().locator("#reader").getAttribute("data-pages"), "4", "the embed shows the new pages");
    // Another reader after the switch adds to the same document's figures.
    const second = await newContext(browser, { userAgent: UA.replace("131.0.0.0", "132.0.0.0") });
    const secondReader = await second.newPage();
    await secondReader.goto(address);
    assert.equal((await readerState(secondReader)).pages, 4);
    await until(async () => (await views()) >= viewsBefore + 1, 30_000, "the views to go on counting");
    await second.close();

    const ctx = await newContext(browser, { viewport: { width: 1366, height: 850 } });
    const app = await ctx.newPage();
    await signInBrowser(app, server.url, "tester");
    await app.goto(`${server.url}/app/documents/${documentId}`);
    assert.equal(await app.locator("[data-replacement-state]").count(), 0, "nothing pending any more");
    await shot(app, "edit-after-switch-wide");
    await shot(reader, "reader-after-switch-wide");
    await ctx.close();
    await readers.close();
  });
});
