import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { launchChromium, newContext, seriousViolations, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { READER_FIXTURE, READER_FIXTURE_PAGES, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/** The reader in Debian's Chromium, on a document converted by the real pipeline (issue 5, "Must show"). */
describe("reader in a real browser", { timeout: 150_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let desktop: BrowserContext;
  let doc: DocumentRecord;
  let failed: DocumentRecord;
  let pending: DocumentRecord;
  let scan: DocumentRecord;
  let page: Page;
  const watches: PageWatch[] = [];
  let origin: string;
  let url: string;

  const open = async (context: BrowserContext, address: string) => {
    const w = await watchedPage(context, origin);
    watches.push(w.watch);
    await w.page.goto(address);
    return w.page;
  };
  /** The reader's script has run and the pages it shows have painted. */
  const ready = (p: Page) =>
    p.waitForFunction(() => {
      const shown = [...document.querySelectorAll<HTMLElement>(".page.shown img")] as HTMLImageElement[];
      return document.querySelector<HTMLElement>("#reader")?.dataset.ready === "true" && shown.length > 0 && shown.every((i) => i.complete && i.naturalWidth > 0);
    });
  const shownPages = (p: Page) =>
    p.$$eval(".page.shown", (els) => els.filter((e) => (e as HTMLElement).offsetWidth > 0).map((e) => Number((e as HTMLElement).dataset.page)));
  const hash = (p: Page) => p.evaluate(() => location.hash);
  const waitHash = (p: Page, h: string) => p.waitForFunction((want) => location.hash === want, h);

  before(async () => {
    fx = await startWebFixture();
    origin = fx.server.url;
    [doc, browser] = await Promise.all([fx.publish(READER_FIXTURE, { title: "Sample fonts", tags: "fonts" }), launchChromium()]);
    failed = await fx.publish("bad/pdf-corrupt-no-trailer.pdf", { title: "Broken file" });
    // A scan: its words exist only in the page images until OCR reads them.
    scan = await fx.publish("ocr-scanned-2pages-faa-advisory.pdf", { title: "Scanned circular" });
    await fx.stopWorker();
    pending = await fx.uploadPending(READER_FIXTURE, { title: "Still converting" });
    url = `${origin}/${doc.username}/docs/${doc.name}`;
    desktop = await newContext(browser);
    page = await open(desktop, url);
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  test("opens with the first page painted, alone as the cover of a two-page spread", async () => {
    await ready(page);
    assert.deepEqual(await shownPages(page), [1]);
    assert.equal(await page.$$eval(".page", (els) => els.length), READER_FIXTURE_PAGES);
    // The title on top and the first page already in the first screen.
    const layout = await page.evaluate(() => ({
      scrollY,
      title: document.querySelector("h1")!.getBoundingClientRect().top,
      pageTop: document.querySelector('.page[data-page="1"]')!.getBoundingClientRect().top,
      innerHeight,
    }));
    assert.equal(layout.scrollY, 0);
    assert.ok(layout.title >= 0 && layout.pageTop < layout.innerHeight * 0.75, JSON.stringify(layout));
    // A real picture, not a blank frame: the pixels vary (text on white, grey surround).
    const stats = await sharp(await page.screenshot()).stats();
    assert.ok(stats.channels.slice(0, 3).every((c) => c.stdev > 20), `stdev ${stats.channels.map((c) => c.stdev.toFixed(1))}`);
    const shot = await sharp(await page.locator('.page[data-page="1"]').screenshot()).greyscale().stats();
    assert.ok(shot.channels[0]!.stdev > 20 && shot.channels[0]!.min < 100 && shot.channels[0]!.max > 200, "the page image shows dark text on light paper");
  });

  test("arrow keys, buttons and clicks on page edges go forward and back by spread; the address follows", async () => {
    await ready(page);
    await page.keyboard.press("ArrowRight");
    await waitHash(page, "#page=2");
    assert.deepEqual(await shownPages(page), [2, 3]);
    await page.keyboard.press("ArrowRight");
    await waitHash(page, "#page=4");
    assert.deepEqual(await shownPages(page), [4, 5]);
    await page.keyboard.press("ArrowLeft");
    await waitHash(page, "#page=2");
    await page.keyboard.press("ArrowLeft");
    await waitHash(page, "#page=1");
    assert.deepEqual(await shownPages(page), [1]);
    await page.click("[data-action=next]");
    await waitHash(page, "#page=2");
    await page.click("[data-action=prev]");
    await waitHash(page, "#page=1");
    // A click on the outer part of a page turns it.
    const cover = (await page.locator('.page[data-page="1"]').boundingBox())!;
    await page.mouse.click(cover.x + cover.width * 0.95, cover.y + cover.height / 2);
    await waitHash(page, "#page=2");
    const left = (await page.locator('.page[data-page="2"]').boundingBox())!;
    await page.mouse.click(left.x + left.width * 0.05, left.y + left.height / 2);
    await waitHash(page, "#page=1");
  });

  test("the page-number box jumps to a page", async () => {
    await page.fill("#page-number", "9");
    await page.press("#page-number", "Enter");
    await waitHash(page, "#page=9");
    assert.deepEqual(await shownPages(page), [8, 9]);
    await ready(page);
  });

  test("a search hit jumps to its page and highlights the words there", async () => {
    await page.fill("#search-q", "timesBI");
    await page.press("#search-q", "Enter");
    await page.waitForSelector("[data-role=results] a[data-page]");
    assert.deepEqual(await page.$$eval("[data-role=results] a[data-page]", (as) => as.map((a) => a.textContent)), ["Page 12"]);
    await waitHash(page, "#page=12");
    assert.ok((await shownPages(page)).includes(12));
    await page.waitForSelector('.page[data-page="12"] .hl');
    const box = await page.locator('.page[data-page="12"] .hl').first().boundingBox();
    assert.ok(box && box.width > 5 && box.height > 3, "the highlight covers the word");
    assert.equal(new URL(page.url()).searchParams.get("q"), "timesBI", "the search is in the address");
    await page.click("[data-action=prev]");
    await page.click("[data-role=results] a[data-page='12']");
    await waitHash(page, "#page=12");
  });

  test("a scanned PDF is found by a word only its page image holds, highlighted where the image shows it", async () => {
    // A context of its own, so the shared reader page keeps the focus its full-screen test needs.
    const context = await newContext(browser);
    const scanPage = await open(context, `${origin}/${scan.username}/docs/${scan.name}`);
    await ready(scanPage);
    await scanPage.fill("#search-q", "Departure");
    await scanPage.press("#search-q", "Enter");
    await scanPage.waitForSelector("[data-role=results] a[data-page]");
    const results = await scanPage.$$eval("[data-role=results] a[data-page]", (as) => as.map((a) => a.textContent));
    assert.equal(results[0], "Page 1", `results: ${results.join(", ")}`);
    await scanPage.waitForSelector('.page[data-page="1"] .hl');
    const hl = await scanPage.locator('.page[data-page="1"] .hl').first().boundingBox();
    const img = await scanPage.locator('.page[data-page="1"] img').boundingBox();
    assert.ok(hl && img && hl.width > 5 && hl.height > 3, "the highlight covers the word");
    // In the circular's subject line, in the upper half of the page.
    assert.ok(hl.y > img.y && hl.y < img.y + img.height / 2, `highlight at ${JSON.stringify(hl)} on a page at ${JSON.stringify(img)}`);
    await context.close();
  });

  test("deep links open at #page=N and at a ?q= search", async () => {
    const p = await open(desktop, `${url}#page=7`);
    await ready(p);
    assert.deepEqual(await shownPages(p), [6, 7]);
    assert.equal(await p.inputValue("#page-number"), "7");
    await p.goto(`${url}?q=zapfdingbats`);
    await waitHash(p, "#page=14");
    assert.deepEqual(await shownPages(p), [14]);
    await p.waitForSelector('.page[data-page="14"] .hl');
    await p.close();
  });

  test("zoom by button and ctrl-wheel, full screen, and a text layer that can be selected", async () => {
    await page.keyboard.press("Home");
    await waitHash(page, "#page=1");
    const width = () => page.$eval('.page[data-page="1"]', (e) => (e as HTMLElement).getBoundingClientRect().width);
    const before = await width();
    await page.click("[data-action=zoom-in]");
    const zoomed = await width();
    assert.ok(zoomed > before * 1.2, `${before} -> ${zoomed}`);
    const stage = (await page.locator("[data-role=stage]").boundingBox())!;
    await page.mouse.move(stage.x + stage.width / 2, stage.y + stage.height / 2);
    await page.keyboard.down("Control");
    await page.mouse.wheel(0, -200);
    await page.keyboard.up("Control");
    await page.waitForFunction((w) => document.querySelector('.page[data-page="1"]')!.getBoundingClientRect().width > w * 1.05, zoomed);
    await page.click("[data-action=zoom-out]");
    await page.click("[data-action=zoom-out]");
    await page.click("[data-action=fullscreen]");
    await page.waitForFunction(() => document.fullscreenElement?.classList.contains("reader-body") === true);
    // Full screen holds the pages alone (reader-layout-browser.test.ts): its corner button leaves it.
    await page.click(".fs-exit");
    await page.waitForFunction(() => document.fullscreenElement === null);

    await page.waitForSelector('.page[data-page="1"] .text-layer span');
    const selected = await page.evaluate(() => {
      const layer = document.querySelector('.page[data-page="1"] .text-layer')!;
      const range = document.createRange();
      range.selectNodeContents(layer);
      const sel = getSelection()!;
      sel.removeAllRanges();
      sel.addRange(range);
      const text = sel.toString();
      sel.removeAllRanges();
      return text;
    });
    assert.match(selected, /TCPDF Example 055/);
  });

  test("continuous mode shows every page and follows the page in view", async () => {
    const p = await open(desktop, `${url}#page=1`);
    await ready(p);
    await p.click("[data-action=mode]");
    await p.waitForFunction(() => document.querySelectorAll<HTMLElement>(".page").length === [...document.querySelectorAll<HTMLElement>(".page")].filter((e) => e.offsetHeight > 0).length);
    await p.$eval("[data-role=stage]", (stage) => {
      const target = document.querySelector('.page[data-page="6"]')!;
      stage.scrollTop += target.getBoundingClientRect().top - stage.getBoundingClientRect().top;
    });
    await waitHash(p, "#page=6");
    assert.equal(await p.inputValue("#page-number"), "6");
    await p.waitForFunction(() => (document.querySelector('.page[data-page="6"] img') as HTMLImageElement).complete);
    await p.close();
  });

  test("a phone shows one page at a time; a swipe turns it, a pinch zooms", async () => {
    const phone = await newContext(browser, { viewport: { width: 390, height: 800 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const p = await open(phone, `${url}#page=2`);
    await ready(p);
    assert.deepEqual(await shownPages(p), [2]);
    await p.click("[data-action=next]");
    await waitHash(p, "#page=3");
    assert.deepEqual(await shownPages(p), [3]);
    // A real touch swipe, right to left, through the browser's input pipeline.
    const cdp = await phone.newCDPSession(p);
    const stage = (await p.locator("[data-role=stage]").boundingBox())!;
    const y = stage.y + stage.height / 2;
    const touch = (type: "touchStart" | "touchMove" | "touchEnd", x: number) =>
      cdp.send("Input.dispatchTouchEvent", { type, touchPoints: type === "touchEnd" ? [] : [{ x, y }] });
    await touch("touchStart", stage.x + stage.width * 0.8);
    for (const f of [0.6, 0.4, 0.2]) await touch("touchMove", stage.x + stage.width * f);
    await touch("touchEnd", stage.x + stage.width * 0.2);
    await waitHash(p, "#page=4");
    assert.deepEqual(await shownPages(p), [4]);
    // Two fingers moving apart zoom in.
    const width = () => p.$eval('.page[data-page="4"]', (e) => e.getBoundingClientRect().width);
    const before = await width();
    const cx = stage.x + stage.width / 2;
    const pinch = (type: "touchStart" | "touchMove" | "touchEnd", d: number) =>
      cdp.send("Input.dispatchTouchEvent", { type, touchPoints: type === "touchEnd" ? [] : [{ x: cx - d, y, id: 1 }, { x: cx + d, y, id: 2 }] });
    await pinch("touchStart", 40);
    for (const d of [60, 80, 100]) await pinch("touchMove", d);
    await pinch("touchEnd", 100);
    await p.waitForFunction((w) => document.querySelector('.page[data-page="4"]')!.getBoundingClientRect().width > w * 1.5, before);
    assert.equal(await hash(p), "#page=4", "a pinch is not a swipe");
    await phone.close();
  });

  test("without script the reader is a list of every page image with its text", async () => {
    const noJs = await newContext(browser, { javaScriptEnabled: false });
    const p = await open(noJs, url);
    const visibleImages = await p.$$eval(".pages img", (imgs) => imgs.filter((i) => (i as HTMLElement).offsetHeight > 100).length);
    assert.equal(visibleImages, READER_FIXTURE_PAGES);
    assert.ok((await p.locator('.page[data-page="12"] .page-text').boundingBox())!.height > 50, "page text is shown");
    assert.match((await p.locator('.page[data-page="12"] .page-text').innerText()), /FONT: timesBI/);
    await noJs.close();
  });

  test("only the embed page can be framed", async () => {
    const framing = await desktop.newPage(); // not watched: the refused frame is logged as an error on purpose
    // Another site (another origin on this machine) framing both pages.
    const site = createServer((_req, res) =>
      res.writeHead(200, { "content-type": "text/html" })
        .end(`<!doctype html><title>x</title><iframe name="embed" width="600" height="500" src="${url}/embed?page=3"></iframe><iframe name="reader" src="${url}"></iframe>`),
    );
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    await framing.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    const embed = framing.frame({ name: "embed" })!;
    await embed.waitForSelector(".page.shown img");
    assert.equal(await embed.evaluate(() => location.hash), "#page=3");
    const reader = framing.frame({ name: "reader" })!;
    await reader.waitForLoadState();
    assert.equal(await reader.$("#reader"), null, "the reader refuses to be framed");
    await framing.close();
    site.close();
  });

  test("axe finds no serious or critical violation on the reader, profile, P and F pages", async () => {
    // axe is injected by the test: the context lets it past the page's CSP.
    const axeContext = await newContext(browser, { bypassCSP: true });
    const p = await axeContext.newPage();
    const found: Record<string, unknown> = {};
    for (const path of [`/${doc.username}/docs/${doc.name}`, `/${doc.username}`, `/${doc.username}/docs/${pending.name}`, `/${doc.username}/docs/${failed.name}`]) {
      await p.goto(origin + path);
      const v = await seriousViolations(p);
      if (v.length) found[path] = v;
    }
    await axeContext.close();
    assert.deepEqual(found, {});
  });

  test("the \"being processed\" page turns into the reader by itself once the document is published", async () => {
    const p = await open(desktop, `${origin}/${doc.username}/docs/${pending.name}`);
    assert.match(await p.innerText("main"), /being processed/);
    await fx.resumeWorker();
    await p.waitForSelector("#reader .page.shown img", { timeout: 60_000 });
    assert.equal(await p.innerText("h1"), "Still converting");
    await p.close();
  });

  test("no console errors and no request to any other host, on every page opened", async () => {
    await page.reload();
    await ready(page);
    assert.deepEqual(watches.flatMap((w) => w.errors), []);
    assert.deepEqual(watches.flatMap((w) => w.foreignRequests), []);
    assert.equal(await hash(page), "#page=1");
  });
});
