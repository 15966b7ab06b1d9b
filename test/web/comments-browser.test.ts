import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { givePassword, signInBrowser, TEST_APP_ENV } from "../helpers/app-client.ts";
import { launchChromium, newContext, seriousViolations, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

const PDF = "pdf-quartz-firefox-1page.pdf";
/** Where the screenshots looked at go (PREAMBLE: /work/wt/notes/shots/<name>/); off unless set. */
const SHOTS = process.env.QUIRE_COMMENT_SHOTS;
const WIDE = { width: 1366, height: 850 };
const PHONE = { width: 390, height: 844 };
const PHONE_UA = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Mobile Safari/537.36";

const HOSTILE_NAME = `<img src=x onerror="window.__pwned=1">Mallory`;
const HOSTILE_TEXT = `Great read. <script>window.__pwned=2</script>\nMore at https://evil.example/phish and <a href="https://evil.example">here</a>.`;

/**
 * decisions §16 in Debian's Chromium: a reader rates and comments on a wide screen and on a phone,
 * with the mouse and with the keyboard alone, with and without script; the publisher approves in
 * the app and the comment appears under the reader; a hidden one disappears; axe finds nothing
 * serious on the reader, the comments page and the app's comments page.
 */
describe("comments and ratings in a real browser", { timeout: 240_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let doc: DocumentRecord;
  let origin: string;
  const watches: PageWatch[] = [];
  const contexts: BrowserContext[] = [];

  const docUrl = () => `${origin}/tester/docs/${doc.name}`;
  const open = async (opts: { viewport: { width: number; height: number }; userAgent?: string; javaScriptEnabled?: boolean; mobile?: boolean }) => {
    const context = await newContext(browser, {
      viewport: opts.viewport,
      ...(opts.userAgent ? { userAgent: opts.userAgent } : {}),
      ...(opts.mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
      javaScriptEnabled: opts.javaScriptEnabled ?? true,
    });
    contexts.push(context);
    const w = await watchedPage(context, origin);
    watches.push(w.watch);
    return w.page;
  };
  const shot = async (page: Page, name: string, selector?: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    if (selector) await page.locator(selector).scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: false });
  };
  const axe = async (path: string, signedIn?: BrowserContext) => {
    const c = await newContext(browser, { bypassCSP: true, ...(signedIn ? { storageState: await signedIn.storageState() } : {}) });
    const p = await c.newPage();
    await p.goto(origin + path);
    const found = await seriousViolations(p);
    await c.close();
    assert.deepEqual(found, [], `${path}: ${JSON.stringify(found)}`);
  };
  const commentTexts = (page: Page) => page.locator(".comments .comment-text").allInnerTexts();

  before(async () => {
    fx = await startWebFixture({ ...TEST_APP_ENV });
    origin = fx.server.url;
    await givePassword(fx.server, "tester");
    [doc, browser] = await Promise.all([fx.publish(PDF, { title: "Field guide", description: "A guide to the field." }), launchChromium()]);
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await fx?.close();
  });

  test("a reader rates and comments on a wide screen, with the mouse", async () => {
    const page = await open({ viewport: WIDE });
    await page.goto(docUrl());
    await page.locator('label[for="rate-4"]').click();
    await page.getByRole("button", { name: "Rate" }).click();
    await page.locator("[data-role=rating-status]").filter({ hasText: "you rated this document 4 of 5" }).waitFor();
    assert.equal(await page.locator("[data-role=rating-now]").innerText(), "4.0 out of 5 from 1 rating");
    assert.equal(page.url().replace(/#.*$/, ""), docUrl(), "no page change with script");
    await page.getByLabel("Name shown with your comment").fill(HOSTILE_NAME);
    await page.getByLabel("Comment", { exact: true }).fill(HOSTILE_TEXT);
    await page.getByRole("button", { name: "Post comment" }).click();
    await page.locator("[data-role=comment-status]").filter({ hasText: "once the publisher has approved it" }).waitFor();
    assert.equal(await page.getByLabel("Comment", { exact: true }).inputValue(), "", "the text box is emptied for the next one");
    assert.deepEqual(await commentTexts(page), [], "held for approval: not shown yet");
    await shot(page, "reader-wide", "#rating");
  });

  test("a reader rates and comments on a phone", async () => {
    const page = await open({ viewport: PHONE, userAgent: PHONE_UA, mobile: true });
    await page.goto(docUrl());
    await page.locator('label[for="rate-2"]').tap();
    await page.getByRole("button", { name: "Rate" }).tap();
    await page.locator("[data-role=rating-status]").filter({ hasText: "2 of 5" }).waitFor();
    assert.equal(await page.locator("[data-role=rating-now]").innerText(), "3.0 out of 5 from 2 ratings", "another reader: added");
    await page.getByLabel("Name shown with your comment").fill("Pat on a phone");
    await page.getByLabel("Comment", { exact: true }).fill("Read it on the bus.\nTwo lines.");
    await page.getByRole("button", { name: "Post comment" }).tap();
    await page.locator("[data-role=comment-status]").filter({ hasText: "approved" }).waitFor();
    // Nothing wider than the phone.
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), "no sideways scrolling");
    await shot(page, "reader-phone", "#comments");
  });

  test("the publisher approves in the app (several at once); the comments appear under the reader as text", async () => {
    const app = await open({ viewport: WIDE });
    await signInBrowser(app, origin, "tester");
    await app.goto(`${origin}/app/documents`);
    assert.match(await app.locator(".app-nav a[href='/app/comments']").innerText(), /Comments\s*2/, "the pending count in the navigation");
    await app.locator(".app-nav a[href='/app/comments']").click();
    await app.waitForURL(`${origin}/app/comments`);
    assert.equal(await app.locator(".comment-item").count(), 2);
    // The hostile name is text in the app too.
    assert.ok((await app.locator(".comment-item .comment-author").allInnerTexts()).includes(HOSTILE_NAME));
    await shot(app, "app-comments-wide");
    for (const box of await app.locator(".comment-item input[type=checkbox]").all()) await box.check();
    await app.getByRole("button", { name: "Approve selected" }).click();
    await app.locator(".message.notice").filter({ hasText: "2 comments approved." }).waitFor();
    assert.equal(await app.locator(".app-nav .badge").count(), 0, "nothing waiting any more");
    await axe("/app/comments?state=approved", app.context());

    const reader = await open({ viewport: WIDE });
    await reader.goto(docUrl());
    const texts = await commentTexts(reader);
    assert.deepEqual(texts, ["Read it on the bus.\nTwo lines.", HOSTILE_TEXT.replace(/\n/g, "\n")], "newest first, line ends kept");
    assert.ok((await reader.locator(".comment-author").allInnerTexts()).includes(HOSTILE_NAME), "the name as typed, shown as text");
    assert.equal(await reader.locator(".comments a[href*='evil.example']").count(), 0, "no link made from an address");
    assert.equal(await reader.locator(".comments img, .comments script").count(), 0, "no markup from a comment");
    assert.equal(await reader.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, "nothing ran");
    await shot(reader, "reader-comments-wide", "#comments");
    await axe(`/tester/docs/${doc.name}`);
    await axe(`/tester/docs/${doc.name}/comments`);

    const phone = await open({ viewport: PHONE, userAgent: PHONE_UA, mobile: true });
    await phone.goto(docUrl());
    assert.equal((await commentTexts(phone)).length, 2);
    await shot(phone, "reader-comments-phone", "#comments");

    // Hidden in the app: gone from the reader.
    await app.goto(`${origin}/app/comments?state=approved`);
    await app.locator(".comment-item", { hasText: "Pat on a phone" }).locator("input[type=checkbox]").check();
    await app.getByRole("button", { name: "Hide selected" }).click();
    await app.locator(".message.notice").filter({ hasText: "1 comment hidden." }).waitFor();
    await reader.reload();
    assert.deepEqual(await commentTexts(reader), [HOSTILE_TEXT], "the hidden one has disappeared");

    const appPhone = await open({ viewport: PHONE, userAgent: PHONE_UA, mobile: true });
    await signInBrowser(appPhone, origin, "tester");
    await appPhone.goto(`${origin}/app/comments?state=hidden`);
    assert.equal(await appPhone.locator(".comment-item").count(), 1);
    assert.ok(await appPhone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), "no sideways scrolling");
    await shot(appPhone, "app-comments-phone");
  });

  test("keyboard alone: rating and commenting, the honeypot never focused", async () => {
    const page = await open({ viewport: WIDE, userAgent: "keyboard-reader" });
    await page.goto(docUrl());
    const active = () => page.evaluate(() => {
      const e = document.activeElement as HTMLInputElement | null;
      return { id: e?.id ?? "", name: e?.getAttribute("name") ?? "", tag: e?.tagName ?? "" };
    });
    const tabTo = async (want: (a: { id: string; name: string; tag: string }) => boolean, what: string) => {
      const seen: string[] = [];
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press("Tab");
        const a = await active();
        seen.push(a.id || a.name || a.tag);
        if (want(a)) return seen;
      }
      assert.fail(`never reached ${what} by Tab`);
    };
    const seen = await tabTo((a) => a.name === "stars", "the stars");
    // One tab stop for the group; the arrows choose.
    await page.keyboard.press("Space");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.locator("input[name=stars]:checked").getAttribute("value"), "3");
    await page.keyboard.press("Tab");
    assert.equal((await active()).tag, "BUTTON");
    await page.keyboard.press("Enter");
    await page.locator("[data-role=rating-status]").filter({ hasText: "you rated this document 3 of 5" }).waitFor();
    seen.push(...(await tabTo((a) => a.id === "comment-author", "the name field")));
    await page.keyboard.type("Kim");
    await page.keyboard.press("Tab");
    assert.equal((await active()).id, "comment-text");
    await page.keyboard.type("Typed without a mouse.");
    await page.keyboard.press("Tab");
    assert.equal((await active()).tag, "BUTTON", "the honeypot is out of the tab order");
    await page.keyboard.press("Enter");
    await page.locator("[data-role=comment-status]").filter({ hasText: "approved" }).waitFor();
    assert.ok(!seen.includes("comment-website"), "the honeypot is never focused");
    const pending = await fx.server.services.store.comments.list({ accountId: doc.accountId, states: ["pending"], order: "asc", startIndex: 0, pageSize: 10 });
    assert.deepEqual(pending.items.map((c) => c.body), ["Typed without a mouse."]);
  });

  test("without script: the forms POST and answer pages of their own", async () => {
    const page = await open({ viewport: PHONE, userAgent: "no-script-reader", javaScriptEnabled: false });
    await page.goto(docUrl());
    await page.locator('label[for="rate-5"]').click();
    await Promise.all([page.waitForURL(`${docUrl()}/rating`), page.getByRole("button", { name: "Rate" }).click()]);
    assert.match(await page.locator("[role=status]").innerText(), /you rated this document 5 stars/);
    await page.getByRole("link", { name: "Back to the document" }).click();
    await page.getByLabel("Name shown with your comment").fill("Noscript Nora");
    await Promise.all([page.waitForURL(`${docUrl()}/comments`), page.getByRole("button", { name: "Post comment" }).click()]);
    // Empty text: the form again, with the name kept and the reason said.
    assert.equal(await page.locator("#comment-error").innerText(), "Please write a comment.");
    assert.equal(await page.getByLabel("Name shown with your comment").inputValue(), "Noscript Nora");
    await page.getByLabel("Comment", { exact: true }).fill("Works without script.");
    await page.getByRole("button", { name: "Post comment" }).click();
    await page.locator(".notice-ok").filter({ hasText: "once the publisher has approved it" }).waitFor();
    await shot(page, "noscript-comment-phone");
    // The older comments' pages are plain links.
    await page.goto(`${docUrl()}/comments?page=1`);
    assert.equal(await page.locator(".comment").count(), 1);
  });

  test("the embed rates in its frame (525 × 340), the pages still in view, and carries no comments", async () => {
    const page = await open({ viewport: { width: 525, height: 340 }, userAgent: "embed-reader" });
    await page.goto(`${docUrl()}/embed`);
    assert.equal(await page.locator(".comments").count(), 0);
    const stage = await page.locator("[data-role=stage]").boundingBox();
    assert.ok(stage && stage.height >= 150, `the pages keep most of the frame: ${stage?.height}`);
    await page.locator('label[for="rate-e-5"]').click();
    await page.getByRole("button", { name: "Rate" }).click();
    await page.locator("[data-role=rating-status]").filter({ hasText: "5 of 5" }).waitFor();
    await shot(page, "embed-525x340");
  });

  test("no console errors, nothing fetched from another host", () => {
    for (const w of watches) {
      assert.deepEqual(w.errors.filter((e) => !/status of 4\d\d/.test(e)), []);
      assert.deepEqual(w.foreignRequests, []);
    }
  });
});
