import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import sharp from "sharp";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { utcDay } from "../../src/domain/reader-identity.ts";
import { givePassword, TEST_APP_ENV, TEST_PASSWORD } from "../helpers/app-client.ts";
import { accountIdOf } from "../helpers/api-seed.ts";
import { launchChromium, newContext, seriousViolations, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { until } from "../helpers/poll.ts";
import { READER_FIXTURE, READER_FIXTURE_PAGES, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/** Screenshots of the statistics pages (issue 24), looked at before the work is called done. */
const SHOTS = process.env.QUIRE_STATS_SCREENSHOTS;
/** A desktop browser's user agent: headless Chromium calls itself HeadlessChrome, which the bot list knows. */
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/** A reader in Chromium turns pages; the publisher's statistics page then shows the view, the read and the depth curve. */
describe("statistics in a real browser", { timeout: 180_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let doc: DocumentRecord;
  let origin: string;
  let accountId: number;
  const watches: PageWatch[] = [];
  const shot = async (p: Page, name: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await writeFile(`${SHOTS}/${name}.png`, await sharp(await p.screenshot({ fullPage: true })).png({ palette: true, quality: 80 }).toBuffer());
  };
  const report = () => {
    const day = utcDay(Date.now());
    return fx.server.services.store.statistics.report({ accountId, documentId: doc.documentId, range: { from: day, to: day } });
  };

  before(async () => {
    fx = await startWebFixture({ ...TEST_APP_ENV });
    origin = fx.server.url;
    accountId = await accountIdOf(fx.server, fx.server.account.apiKey);
    await givePassword(fx.server, "tester");
    [doc, browser] = await Promise.all([fx.publish(READER_FIXTURE, { title: "Annual report 2025" }), launchChromium()]);
    assert.equal(doc.state, "A");
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  test("a reader turns pages: a view, a read and the pages reached are counted from its beacons", async () => {
    const context = await newContext(browser, { userAgent: UA });
    const { page, watch } = await watchedPage(context, origin);
    watches.push(watch);
    const beacons: string[] = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/beacon")) beacons.push(r.postData() ?? "");
    });
    await page.goto(`${origin}/${doc.username}/docs/${doc.name}`);
    await page.waitForFunction(() => document.querySelector<HTMLElement>("#reader")?.dataset.ready === "true");
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press("ArrowRight");
      await page.waitForFunction((n) => (document.querySelector("#page-number") as HTMLInputElement).value !== String(n), i + 1);
    }
    // Turning pages is reported by a beacon within seconds, without leaving the page.
    await until(async () => (await report()).totals.reads === 1, 30_000, "the read to be counted");
    // Leaving the page (hidden) sends what is left, including a page reached the moment before.
    const before = await page.inputValue("#page-number");
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction((n) => (document.querySelector("#page-number") as HTMLInputElement).value !== n, before);
    const last = Number(await page.inputValue("#page-number"));
    await page.close({ runBeforeUnload: true });
    // The last beacon is on its way when the page is gone, as when a reader closes a tab and the browser
    // goes on; closing the whole browser context at once could cancel it before it is sent.
    await until(async () => (await report()).depth[last - 1]!.readers === 1, 30_000, `page ${last}, reached just before leaving, to be counted`);
    await context.close();
    const r = await report();
    assert.equal(r.totals.views, 1);
    assert.equal(r.totals.reads, 1);
    assert.ok(r.depth[0]!.readers === 1 && r.depth[3]!.readers === 1 && r.depth[last]!.readers === 0, `${last}: ${JSON.stringify(r.depth.slice(0, 8))}`);
    assert.equal(r.depth[READER_FIXTURE_PAGES - 1]!.readers, 0);
    assert.ok(beacons.length >= 1 && beacons.every((b) => b.length < 200 && !b.includes("Mozilla")), beacons.join("\n"));
  });

  test("the publisher's statistics pages show the views, the reads and the depth curve, wide and on a phone", async () => {
    for (const [name, viewport] of [["wide", { width: 1366, height: 850 }], ["phone", { width: 390, height: 844 }]] as const) {
      const context = await newContext(browser, { userAgent: UA, viewport });
      const { page, watch } = await watchedPage(context, origin);
      watches.push(watch);
      await page.goto(`${origin}/app/statistics`);
      await page.fill("#username", "tester");
      await page.fill("#password", TEST_PASSWORD);
      await Promise.all([page.waitForURL(`${origin}/app/statistics`), page.keyboard.press("Enter")]);
      assert.equal(await page.locator("h1").innerText(), "Statistics");
      const views = page.locator(".stats-summary div", { hasText: "Views" }).first().locator("dd");
      assert.equal(await views.innerText(), "1");
      assert.equal(await page.locator(".stats-summary div", { hasText: "Reads" }).first().locator("dd").innerText(), "1");
      await page.waitForSelector(".stats-chart[data-chart=days] canvas");
      assert.match(await page.locator("table.stats-list").first().innerText(), /Annual report 2025/);
      await shot(page, `statistics-account-${name}`);

      await page.click("table.stats-list a");
      await page.waitForURL(new RegExp(`/app/statistics/${doc.documentId}`));
      assert.equal(await page.locator("h1").innerText(), "Statistics: Annual report 2025");
      await page.waitForSelector(".stats-chart[data-chart=depth] canvas");
      const depth = await page.$$eval("#depth-table tbody tr", (rows) => rows.map((r) => (r as HTMLTableRowElement).cells[2]!.textContent));
      assert.equal(depth.length, READER_FIXTURE_PAGES);
      assert.deepEqual(depth.slice(0, 4), ["100%", "100%", "100%", "100%"]);
      assert.equal(depth[0], "100%");
      assert.equal(depth[READER_FIXTURE_PAGES - 1], "0%");
      await shot(page, `statistics-document-${name}`);
      await context.close();
    }
    // axe is injected as a script: only a context that bypasses the CSP lets it run (the pages above ran under it).
    const axeContext = await newContext(browser, { userAgent: UA, bypassCSP: true });
    const axePage = await axeContext.newPage();
    await axePage.goto(`${origin}/app/statistics`);
    await axePage.fill("#username", "tester");
    await axePage.fill("#password", TEST_PASSWORD);
    await Promise.all([axePage.waitForURL(`${origin}/app/statistics`), axePage.keyboard.press("Enter")]);
    await axePage.waitForSelector(".stats-chart canvas");
    assert.deepEqual(await seriousViolations(axePage), []);
    await axePage.goto(`${origin}/app/statistics/${doc.documentId}`);
    await axePage.waitForSelector(".stats-chart[data-chart=depth] canvas");
    assert.deepEqual(await seriousViolations(axePage), []);
    await axeContext.close();
    for (const w of watches) {
      assert.deepEqual(w.foreignRequests, [], "no request leaves the site");
      assert.deepEqual(w.errors, [], "no console error (a CSP refusal would be one)");
    }
    // The publisher's own visits to the app marked their browser: not counted as readers.
    assert.equal((await report()).totals.views, 1);
  });
});
