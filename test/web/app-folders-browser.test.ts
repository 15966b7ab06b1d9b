import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { QuireClient } from "../../src/client/quire-client.ts";
import { appAccount, signInBrowser } from "../helpers/app-client.ts";
import { launchChromium, newContext, seriousViolations, appScreenshot, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker } from "../helpers/test-worker.ts";

/** Folders and sharing in Debian's Chromium (issue 14 items 4 and 5, "Must show"). */
describe("folders and sharing in a real browser", { timeout: 200_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  let documentId: string;
  let title: string;

  before(async () => {
    [server, browser] = await Promise.all([startTestServer({ QUIRE_PASSWORD_HASH_COST: "12" }), launchChromium()]);
    const worker = await startTestWorker(server, { startOffice: false, maxAttempts: 1 });
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    title = 'Rotated <img src=x onerror="alert(1)">';
    const answer = await client.upload(join(FIXTURES, "pdf-tcpdf-14pages.pdf"), { title, name: "rotated" });
    documentId = String((answer.rsp._content!.document as Record<string, unknown>).documentId);
    for (let i = 0; i < 600 && (await server.services.store.documents.getById(1, documentId))?.state === "P"; i++) await new Promise((r) => setTimeout(r, 200));
    assert.equal((await server.services.store.documents.getById(1, documentId))?.state, "A");
    await worker.stop();
    await appAccount(server, "tester");
    context = await newContext(browser);
    ({ page, watch } = await watchedPage(context, server.url));
    page.on("dialog", (d) => void d.accept());
    await signInBrowser(page, server.url, "tester");
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test("make a folder, put a document in it, see it there, remove it, rename and delete the folder", async () => {
    await page.goto(`${server.url}/app/folders`);
    await page.fill("#f-name", "Reports <script>");
    await page.fill("#f-description", "Yearly & monthly");
    await page.click("text=Create folder");
    await page.waitForURL(/\/app\/folders\/[0-9a-f-]{36}\?done=created$/);
    assert.equal(await page.textContent("h1"), "Reports <script>");
    // Several can be ticked at once (issue 26 item 9); this account has the one.
    await page.check(`input[name="documentId"][value="${documentId}"]`);
    await page.click("text=Add to folder");
    await page.waitForURL(/done=added/);
    assert.equal(await page.textContent(".folder-docs li a"), title, "the title is shown as text, never as markup");
    assert.equal(await page.$$eval("img", (imgs) => imgs.length), 0);
    await page.click(".folder-docs button");
    await page.waitForURL(/done=removed/);
    assert.equal(await page.$(".folder-docs"), null);
    await page.fill("#f-name", "Archive");
    await page.click("text=Save");
    await page.waitForURL(/done=saved/);
    assert.equal(await page.textContent("h1"), "Archive");
    await page.click("text=Delete folder");
    await page.waitForURL(/\/app\/folders$/);
    assert.match(await page.textContent("main") ?? "", /No folders yet/);
    assert.deepEqual(watch.errors, []);
  });

  test("an embed code copied from the sharing page shows the reader in another site's page", async () => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.goto(`${server.url}/app/documents/${documentId}/share`);
    await page.fill("#e-page", "3");
    await page.fill("#e-width", "600");
    // The preview follows as it is typed.
    await page.waitForFunction(() => (document.getElementById("embed-preview") as HTMLIFrameElement).getAttribute("src")!.endsWith("?page=3"));
    assert.equal(await page.getAttribute("#embed-preview", "width"), "600");
    // The preview really shows the reader: the page's policy lets it frame this site's embed page.
    const preview = await (await page.waitForSelector("#embed-preview")).contentFrame();
    await preview!.waitForSelector(".page.shown img");
    await page.click("text=Make embed code");
    await page.waitForSelector(".embeds li");
    await page.click(".embeds .copy");
    const code = await page.evaluate(() => navigator.clipboard.readText());
    // Absolute (issue 26 item 1): from the address the publisher's browser used, with no QUIRE_PUBLIC_URL.
    assert.ok(code.startsWith(`<iframe src="${server.url}/`), code);
    assert.match(code.replace(server.url, ""), /^<iframe src="\/tester\/docs\/rotated\/embed\?embed=\d+&amp;page=3" width="600" height="340" title="Rotated &lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;" style="border:0" allowfullscreen><\/iframe>$/);

    // Another site's page holding the code as it was copied.
    const site: Server = createServer((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(`<!doctype html><title>A blog</title><h1>My post</h1>${code}`);
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    try {
      const blog = await context.newPage();
      await blog.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
      const frame = await (await blog.waitForSelector("iframe")).contentFrame();
      await frame!.waitForSelector(".page.shown img");
      // The reader opens at the embed's start page.
      assert.match(frame!.url(), /\/tester\/docs\/rotated\/embed\?embed=\d+&page=3#page=3$/);
      await blog.close();
    } finally {
      site.close();
    }
    assert.match(await page.textContent(".og-card .og-title") ?? "", /^Rotated <img src=x onerror="alert\(1\)"> — tester$/);
  });

  test("axe finds nothing serious on the folder and sharing pages, wide or on a phone", async () => {
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      const ctx = await newContext(browser, { viewport, bypassCSP: true });
      const p = await ctx.newPage();
      await signInBrowser(p, server.url, "tester");
      for (const path of ["/app/folders", `/app/documents/${documentId}/share`]) {
        await p.goto(server.url + path);
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${path} at ${viewport.width}px scrolls sideways by ${overflow}px`);
        assert.deepEqual(await seriousViolations(p), [], `${path} at ${viewport.width}px`);
        await appScreenshot(p, `${path.endsWith("/share") ? "share" : "folders"}${viewport.width < 500 ? "-phone" : ""}`);
      }
      await ctx.close();
    }
  });
});
