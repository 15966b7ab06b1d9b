import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";
import sharp from "sharp";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { givePassword, TEST_APP_ENV, TEST_PASSWORD } from "../helpers/app-client.ts";
import { launchChromium, newContext, seriousViolations, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { READER_FIXTURE, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/** Where the screenshots looked at for issue 26 go (items 6 to 9, the reader's parts). */
/** A folder to write the screenshots to (they are for a person to look at; nothing here reads them). */
const SHOTS = process.env.QUIRE_READER_SHOTS;

const WIDE = { viewport: { width: 1366, height: 850 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/**
 * The reader as people use it (issue 26 items 6-9): page 1 whole in the first screen on a wide screen
 * and a phone, full screen holding only the pages, swipes both ways on a phone, Space, search
 * snippets with next/previous, a focus ring on the page area, axe on every public page.
 */
describe("the reader's layout, full screen, swipes and search in a real browser", { timeout: 240_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let wide: BrowserContext;
  let phone: BrowserContext;
  let widePage: Page;
  let phonePage: Page;
  let doc: DocumentRecord;
  let explicit: DocumentRecord;
  let origin: string;
  let url: string;
  const watches: PageWatch[] = [];

  const shot = async (p: Page, name: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await p.screenshot({ path: `${SHOTS}/${name}.png` });
  };
  const open = async (context: BrowserContext, address: string) => {
    const w = await watchedPage(context, origin);
    watches.push(w.watch);
    await w.page.goto(address);
    return w.page;
  };
  /** The reader's script has run, the pages shown have painted and are sized. */
  const ready = (p: Page) =>
    p.waitForFunction(() => {
      const shown = [...document.querySelectorAll<HTMLImageElement>(".page.shown img")];
      return document.querySelector<HTMLElement>("#reader")?.dataset.ready === "true" && shown.length > 0 &&
        shown.every((i) => i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0);
    });
  const shownPages = (p: Page) =>
    p.$$eval(".page.shown", (els) => els.filter((e) => (e as HTMLElement).offsetWidth > 0).map((e) => Number((e as HTMLElement).dataset.page)));
  const waitHash = (p: Page, h: string) => p.waitForFunction((want) => location.hash === want, h);
  /** The box of a page's image, and whether all of it is inside the window as it first shows. */
  const inFirstScreen = (p: Page, n: number) =>
    p.evaluate((n) => {
      const r = document.querySelector(`.page[data-page="${n}"] img`)!.getBoundingClientRect();
      const box = { x: r.x, y: r.y, width: r.width, height: r.height };
      return {
        box, scrollY, innerWidth, innerHeight,
        whole: r.width > 100 && r.height > 100 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth,
      };
    }, n);

  before(async () => {
    // The anonymous budget off: these tests open many pages and searches from one address, and are not about it.
    fx = await startWebFixture({ ...TEST_APP_ENV, QUIRE_ANONYMOUS_PER_SECOND: "0" });
    origin = fx.server.url;
    [doc, browser] = await Promise.all([
      fx.publish(READER_FIXTURE, {
        title: "Sample fonts: every character of the fourteen standard PDF fonts, one page each",
        tags: "fonts,typography,sample",
        description: "A specimen of the standard fonts. ".repeat(24),
        downloadable: "true",
      }),
      launchChromium(),
    ]);
    explicit = await fx.publish("pdf-quartz-firefox-1page.pdf", { title: "Life drawing" });
    await fx.client.ok("document.update", { name: explicit.name, explicit: "true" });
    const store = fx.server.services.store;
    const added = await store.comments.add({ documentId: doc.documentId, author: "Ada", body: "Clear specimens, thank you.", now: Date.now() });
    assert.ok(added.ok);
    await store.comments.setState(doc.accountId, [added.comment.commentId], "approved", Date.now());
    url = `${origin}/${doc.username}/docs/${doc.name}`;
    wide = await newContext(browser, WIDE);
    phone = await newContext(browser, PHONE);
    [widePage, phonePage] = await Promise.all([open(wide, url), open(phone, url)]);
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  test("page 1 is whole in the first screen on 1366×850 and on a 390×844 phone; the details open over it", async () => {
    for (const [name, p] of [["wide", widePage], ["phone", phonePage]] as const) {
      await ready(p);
      const first = await inFirstScreen(p, 1);
      assert.equal(first.scrollY, 0, name);
      assert.ok(first.whole, `${name}: page 1 at ${JSON.stringify(first)}`);
      // The bar stays small: the page takes most of the height.
      assert.ok(first.box.height > first.innerHeight * 0.55, `${name}: page 1 is ${first.box.height}px of ${first.innerHeight}`);
      assert.equal(await p.locator(".doc-description").isVisible(), false, `${name}: the description waits behind "Details"`);
      await shot(p, `reader-${name}`);
      await p.click(".doc-details > summary");
      await p.locator(".doc-description").waitFor({ state: "visible" });
      assert.ok(await p.locator(".doc-details a.download").isVisible(), `${name}: Download is in the details`);
      assert.ok(await p.locator(".doc-tags").isVisible());
      await shot(p, `reader-${name}-details`);
      assert.ok((await inFirstScreen(p, 1)).whole, `${name}: the details do not push the page away`);
      await p.click(".doc-details > summary");
      await p.locator(".doc-description").waitFor({ state: "hidden" });
      // As a menu: Escape closes it (the focus back on its button), and so does a click elsewhere.
      await p.click(".doc-details > summary");
      await p.locator(".doc-description").waitFor({ state: "visible" });
      await p.keyboard.press("Escape");
      await p.locator(".doc-description").waitFor({ state: "hidden" });
      assert.equal(await p.evaluate(() => document.activeElement?.tagName), "SUMMARY");
      await p.click(".doc-details > summary");
      await p.locator(".doc-description").waitFor({ state: "visible" });
      await p.click(".doc-title");
      await p.locator(".doc-description").waitFor({ state: "hidden" });
      assert.equal(new URL(p.url()).pathname, new URL(url).pathname);
    }
  });

  test("full screen shows only the pages, the whole spread fitted to the screen", async () => {
    for (const [name, p, want] of [["wide", widePage, [2, 3]], ["phone", phonePage, [2]]] as const) {
      await p.goto(`${url}#page=2`);
      await ready(p);
      await p.click("[data-action=fullscreen]");
      await p.waitForFunction(() => document.fullscreenElement?.classList.contains("reader-body") === true);
      try {
      await p.waitForFunction((n) => {
        const stage = document.querySelector("[data-role=stage]")!.getBoundingClientRect();
        return stage.height === innerHeight && document.querySelectorAll(".page.shown").length === n;
      }, want.length);
      await ready(p);
      assert.deepEqual(await shownPages(p), [...want], name);
      const seen = await p.evaluate((pages) => {
        const boxes = pages.map((n) => document.querySelector(`.page[data-page="${n}"]`)!.getBoundingClientRect());
        const fitted = boxes.every((r) => r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth);
        // Whatever is at the window's edges and corners is the stage (the pages' surround), nothing else.
        const points = [[2, 2], [innerWidth - 3, 2], [2, innerHeight - 3], [innerWidth - 3, innerHeight - 3], [innerWidth / 2, 2], [innerWidth / 2, innerHeight - 3]];
        const others = points.map(([x, y]) => document.elementFromPoint(x!, y!)).filter((e) => !e || !e.closest("[data-role=stage]") ).map((e) => e?.outerHTML.slice(0, 80));
        const tallest = Math.max(...boxes.map((r) => r.height));
        // Seen: rendered, not transparent, and what the screen shows at its middle (the header is still laid out, under full screen).
        const [toolbar, header, thumbs, exit] = [".toolbar", ".doc-head", ".thumbs", ".fs-exit"].map((sel) =>
          [...document.querySelectorAll<HTMLElement>(sel)].some((e) => {
            const r = e.getBoundingClientRect();
            const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return e.checkVisibility() && getComputedStyle(e).opacity !== "0" && top !== null && e.contains(top);
          }));
        return { fitted, others, tallest, innerHeight, toolbar, header, thumbs, exit };
      }, [...want]);
      assert.ok(seen.fitted, `${name}: ${JSON.stringify(seen)}`);
      assert.deepEqual(seen.others, [], `${name}: only the pages' surround at the edges`);
      assert.equal(seen.toolbar || seen.header || seen.thumbs || seen.exit, false, `${name}: ${JSON.stringify(seen)}`);
      // Fitted: the pages use the screen's height (or its width on a phone), not a box cut short.
      assert.ok(seen.tallest > seen.innerHeight * (name === "wide" ? 0.9 : 0.45), `${name}: ${JSON.stringify(seen)}`);
      await shot(p, `reader-${name}-fullscreen`);
      // Pages still turn; the corner button, reached by the keyboard, leaves full screen.
      await p.keyboard.press("ArrowRight");
      await waitHash(p, name === "wide" ? "#page=4" : "#page=3");
      await p.focus(".fs-exit");
      assert.ok(await p.locator(".fs-exit").evaluate((e) => getComputedStyle(e).opacity === "1"), "the exit button shows when focused");
      await p.keyboard.press("Enter");
      await p.waitForFunction(() => document.fullscreenElement === null);
      } finally {
        await p.evaluate(() => document.fullscreenElement && document.exitFullscreen());
      }
      await ready(p);
      assert.ok(await p.locator(".toolbar").isVisible());
    }
  });

  test("on a phone a swipe turns the page both ways and never leaves the reader", async () => {
    // Arrive from another page, so a "back" would have somewhere to go.
    await phonePage.goto(`${origin}/${doc.username}`);
    await phonePage.goto(url);
    await ready(phonePage);
    const historyLength = await phonePage.evaluate(() => history.length);
    const styles = await phonePage.$eval("[data-role=stage]", (s) => ({ touch: getComputedStyle(s).touchAction, overscroll: getComputedStyle(s).overscrollBehaviorX }));
    assert.deepEqual(styles, { touch: "pan-y", overscroll: "contain" }, "a horizontal swipe is never the browser's");
    const cdp: CDPSession = await phone.newCDPSession(phonePage);
    const stage = (await phonePage.locator("[data-role=stage]").boundingBox())!;
    const y = stage.y + stage.height / 2;
    /** A real one-finger swipe through Chromium's input pipeline, from one fraction of the stage's width to another. */
    const swipe = async (from: number, to: number) => {
      const x = (f: number) => stage.x + stage.width * f;
      await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x: x(from), y }] });
      for (let i = 1; i <= 4; i++) await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [{ x: x(from + ((to - from) * i) / 4), y }] });
      await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
    };
    await swipe(0.85, 0.15); // right to left: forward
    await waitHash(phonePage, "#page=2");
    await swipe(0.85, 0.15);
    await waitHash(phonePage, "#page=3");
    await swipe(0.15, 0.85); // left to right: back a page, not back in history
    await waitHash(phonePage, "#page=2");
    await swipe(0.05, 0.95); // from the very edge, where a browser's "back" gesture starts
    await waitHash(phonePage, "#page=1");
    await swipe(0.05, 0.95); // at page 1: nothing to turn back to, and still nothing leaves
    await swipe(0.85, 0.15);
    await waitHash(phonePage, "#page=2");
    assert.deepEqual(await shownPages(phonePage), [2]);
    assert.equal(new URL(phonePage.url()).pathname, new URL(url).pathname, "still the reader");
    assert.equal(await phonePage.evaluate(() => history.length), historyLength, "turning pages adds no history entries");
    await shot(phonePage, "reader-phone-after-swipes");
    await cdp.detach();
  });

  test("Space turns to the next page and Shift+Space back; in the search box it is a space", async () => {
    const p = widePage;
    await p.goto(`${url}#page=1`);
    await ready(p);
    await p.locator("[data-role=stage]").focus();
    await p.keyboard.press("Space");
    await waitHash(p, "#page=2");
    assert.deepEqual(await shownPages(p), [2, 3]);
    await p.keyboard.press("Space");
    await waitHash(p, "#page=4");
    await p.keyboard.press("Shift+Space");
    await waitHash(p, "#page=2");
    await p.keyboard.press("Shift+Space");
    await waitHash(p, "#page=1");
    assert.equal(await p.evaluate(() => scrollY), 0, "Space did not scroll the window");
    await p.locator("#search-q").focus();
    await p.keyboard.type("a b");
    assert.equal(await p.inputValue("#search-q"), "a b");
    assert.equal(await p.evaluate(() => location.hash), "#page=1");
    await p.fill("#search-q", "");
  });

  test("search lists each page with a snippet, the words marked, and steps to the next and previous match", async () => {
    for (const [name, p] of [["wide", widePage], ["phone", phonePage]] as const) {
      await p.goto(`${url}#page=1`);
      await ready(p);
      await p.fill("#search-q", "Helvetica");
      await p.press("#search-q", "Enter");
      await p.waitForSelector("[data-role=results] li .snippet mark");
      const items = await p.$$eval("[data-role=results] li", (lis) => lis.map((li) => ({
        page: Number(li.querySelector("a")!.dataset.page),
        text: li.querySelector(".snippet")!.textContent!,
        marks: [...li.querySelectorAll("mark")].map((m) => m.textContent),
      })));
      assert.deepEqual(items.map((i) => i.page), [5, 6, 7, 8], name);
      for (const i of items) {
        assert.ok(i.text.length > 20, `a snippet, not only "Page ${i.page}": ${i.text}`);
        assert.ok(i.marks.length > 0 && i.marks.every((m) => /^helvetica$/i.test(m!)), JSON.stringify(i));
      }
      await waitHash(p, "#page=5");
      assert.equal(await p.locator(".hit-status").innerText(), "Match 1 of 4");
      if (name === "phone") {
        assert.ok((await inFirstScreen(p, 5)).whole, "with the results open the page is still whole on a phone");
      }
      await shot(p, `reader-${name}-search`);
      await p.click("[data-action=next-hit]");
      await waitHash(p, "#page=6");
      // Wide screens show 6-7 together: the next match after them is page 8.
      await p.click("[data-action=next-hit]");
      await waitHash(p, name === "wide" ? "#page=8" : "#page=7");
      // Back from 8-9: the last match before them is page 7, shown with 6 on a wide screen.
      await p.click("[data-action=prev-hit]");
      await waitHash(p, name === "wide" ? "#page=7" : "#page=6");
      assert.equal(await p.locator(".hit-status").innerText(), "Match 2 of 4");
      assert.equal(await p.locator("[data-role=results] li[aria-current=true] a").getAttribute("data-page"), "6");
      await p.click("[data-action=close-results]");
      await p.locator("[data-role=results]").waitFor({ state: "hidden" });
    }
    // Without script the server's list has the same snippets and marks.
    const noJs = await newContext(browser, { ...WIDE, javaScriptEnabled: false });
    const p = await noJs.newPage();
    await p.goto(`${url}?q=helvetica`);
    const marks = await p.$$eval("[data-role=results] li mark", (ms) => ms.map((m) => m.textContent));
    assert.ok(marks.length >= 4 && marks.every((m) => m === "helvetica"), JSON.stringify(marks));
    await noJs.close();
  });

  test("keyboard alone: Tab reaches the page area, which shows a visible focus ring", async () => {
    const p = widePage;
    // Loaded afresh, so the keyboard starts from the top of the page.
    await p.goto(url);
    await p.reload();
    await ready(p);
    let onStage = false;
    const path: string[] = [];
    for (let i = 0; i < 30 && !onStage; i++) {
      await p.keyboard.press("Tab");
      path.push(await p.evaluate(() => document.activeElement?.outerHTML.slice(0, 60) ?? ""));
      onStage = await p.evaluate(() => document.activeElement?.getAttribute("data-role") === "stage");
    }
    assert.ok(onStage, `the page area is in the tab order: ${path.join("\n")}`);
    const ring = await p.$eval("[data-role=stage]", (s) => ({ focusVisible: s.matches(":focus-visible"), style: getComputedStyle(s).outlineStyle, width: getComputedStyle(s).outlineWidth }));
    assert.deepEqual(ring, { focusVisible: true, style: "solid", width: "3px" });
    const box = (await p.locator("[data-role=stage]").boundingBox())!;
    await shot(p, "reader-wide-focus-ring");
    // The ring's own colour, 1px inside the stage's left edge, halfway down.
    const png = await p.screenshot({ clip: { x: box.x + 1, y: box.y + box.height / 2, width: 1, height: 1 } });
    const { data } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    assert.ok(data[0]! > 220 && data[1]! > 150 && data[1]! < 210 && data[2]! < 130, `ring pixel rgb(${data[0]}, ${data[1]}, ${data[2]})`);
    // And the arrows turn pages from there.
    await p.keyboard.press("ArrowRight");
    await waitHash(p, "#page=2");
  });

  test("the share preview shows the chosen start page at the chosen size, also after making the code", async () => {
    await givePassword(fx.server, doc.username);
    const app = await newContext(browser, WIDE);
    const p = await open(app, `${origin}/app/sign-in`); // watched: the preview's frame reports its errors too
    await p.fill("#username", doc.username);
    await p.fill("#password", TEST_PASSWORD);
    await p.press("#password", "Enter");
    await p.waitForURL(/\/app\/documents/);
    await p.goto(`${origin}/app/documents/${doc.documentId}/share`);
    await p.fill("#e-page", "5");
    await p.fill("#e-width", "420");
    await p.fill("#e-height", "360");
    const preview = async () => {
      await p.waitForFunction(() => document.querySelector<HTMLIFrameElement>("#embed-preview")!.contentWindow?.location.hash === "#page=5");
      const frame = (await (await p.$("#embed-preview"))!.contentFrame())!;
      await frame.waitForFunction(() => {
        const i = document.querySelector<HTMLImageElement>('.page[data-page="5"].shown img');
        return i !== null && i.complete && i.naturalWidth > 0;
      });
      const box = (await p.locator("#embed-preview").boundingBox())!;
      const img = (await frame.locator('.page[data-page="5"] img').boundingBox())!;
      return { box, img };
    };
    const typed = await preview();
    assert.deepEqual([Math.round(typed.box.width), Math.round(typed.box.height)], [420, 360]);
    // The page is whole inside the small frame.
    assert.ok(typed.img.y >= typed.box.y && typed.img.y + typed.img.height <= typed.box.y + typed.box.height + 0.5, JSON.stringify(typed));
    await p.click("#embed-form button[type=submit]");
    await p.waitForSelector(".embeds li");
    assert.equal(await p.inputValue("#e-page"), "5");
    const made = await preview();
    assert.deepEqual([Math.round(made.box.width), Math.round(made.box.height)], [420, 360]);
    await shot(p, "share-preview");
    await app.close();
  });

  test("axe finds nothing serious on the public pages: reader (with results and details), embed, profile, /search, explicit warning, comments", async () => {
    const found: Record<string, unknown> = {};
    for (const opts of [WIDE, PHONE]) {
      const c = await newContext(browser, { ...opts, bypassCSP: true });
      const p = await c.newPage();
      const check = async (label: string) => {
        const v = await seriousViolations(p);
        if (v.length) found[`${label} ${opts.viewport.width}`] = v;
      };
      assert.match(await (await fetch(`${origin}/${explicit.username}/docs/${explicit.name}`)).text(), /marked as explicit/);
      for (const path of [
        `/${doc.username}/docs/${doc.name}`,
        `/${doc.username}/docs/${doc.name}/embed?page=3`,
        `/${doc.username}`,
        "/search?q=helvetica",
        `/${explicit.username}/docs/${explicit.name}`,
        `/${doc.username}/docs/${doc.name}/comments`,
      ]) {
        await p.goto(origin + path);
        await p.waitForLoadState("load");
        await check(path);
      }
      // The reader with its search results and details open.
      await p.goto(`${url}#page=1`);
      await ready(p);
      await p.fill("#search-q", "helvetica");
      await p.press("#search-q", "Enter");
      await p.waitForSelector("[data-role=results] mark");
      await p.click(".doc-details > summary");
      await check("reader with results and details");
      await c.close();
    }
    assert.deepEqual(found, {});
  });

  test("no console errors and no request to any other host", () => {
    assert.deepEqual(watches.flatMap((w) => w.errors), []);
    assert.deepEqual(watches.flatMap((w) => w.foreignRequests), []);
  });
});
