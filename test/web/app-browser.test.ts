import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { QuireClient } from "../../src/client/quire-client.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { givePassword, TEST_APP_ENV, TEST_PASSWORD } from "../helpers/app-client.ts";
import { launchChromium, newContext, seriousViolations, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

const PDF = "pdf-quartz-firefox-1page.pdf";
/** Set to a folder (docs/app) to write the screenshots of docs/app.md. */
const SHOTS = process.env.QUIRE_APP_SCREENSHOTS;

/** What a publisher does in the app, in Debian's Chromium (issue 14 "Must show"). */
describe("web app in a real browser", { timeout: 180_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let report: DocumentRecord;
  let notes: DocumentRecord;
  let spare: DocumentRecord;
  const watches: PageWatch[] = [];
  const axeChecked: string[] = [];

  /** axe, in a context that shares the session but lets the injected script past the CSP. */
  const axe = async (path: string) => {
    const c = await newContext(browser, { bypassCSP: true, storageState: await context.storageState() });
    const p = await c.newPage();
    await p.goto(origin + path);
    const found = await seriousViolations(p);
    await c.close();
    assert.deepEqual(found, [], `${path}: ${JSON.stringify(found)}`);
    axeChecked.push(path);
  };
  const shot = async (p: Page, name: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await writeFile(`${SHOTS}/${name}.png`, await sharp(await p.screenshot({ fullPage: false })).png({ palette: true, quality: 80 }).toBuffer());
  };
  const docHref = (d: DocumentRecord) => `/app/documents/${d.documentId}`;
  const rowState = (p: Page, d: DocumentRecord) => p.locator(`li.doc[data-id="${d.documentId}"] .state`).innerText();

  before(async () => {
    fx = await startWebFixture({ ...TEST_APP_ENV });
    origin = fx.server.url;
    await givePassword(fx.server, "tester");
    [report, browser] = await Promise.all([
      fx.publish(PDF, { title: "Annual report 2025", description: "What we did this year.", tags: "report,annual" }),
      launchChromium(),
    ]);
    notes = await fx.publish(PDF, { title: "Field notes", access: "public" });
    spare = await fx.publish(PDF, { title: "Old flyer" });
    context = await newContext(browser);
    const w = await watchedPage(context, origin);
    watches.push(w.watch);
    page = w.page;
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  test("signs in with the keyboard alone", async () => {
    await page.goto(`${origin}/app/documents`);
    assert.match(page.url(), /\/app\/sign-in\?next=%2Fapp%2Fdocuments$/);
    await shot(page, "sign-in");
    await axe("/app/sign-in");
    // The username field has the focus from the start; Tab, then Enter sends the form.
    assert.equal(await page.evaluate(() => document.activeElement?.id), "username");
    await page.keyboard.type("tester");
    await page.keyboard.press("Tab");
    await page.keyboard.type(TEST_PASSWORD);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${origin}/app/documents`);
    assert.equal(await page.locator("h1").innerText(), "Documents");
    assert.equal(await page.locator("li.doc").count(), 3);
    assert.equal(await rowState(page, report), "Published");
    await shot(page, "documents");
    await axe("/app/documents");
  });

  test("sorts and filters; the address keeps the choice", async () => {
    await page.selectOption("#f-sort", "title");
    await page.click(".filters button");
    await page.waitForURL(/sort=title/);
    const titles = await page.locator("li.doc h2").allInnerTexts();
    assert.deepEqual(titles, ["Annual report 2025", "Field notes", "Old flyer"]);
    await page.goto(`${origin}/app/documents?state=F`);
    assert.equal(await page.locator("li.doc").count(), 0);
    assert.match(await page.locator("main").innerText(), /No document here/);
  });

  test("edits a title with the keyboard and sees it on the reader page", async () => {
    await page.goto(`${origin}/app/documents`);
    // From the list to the document by keyboard: focus its link, Enter.
    await page.locator(`a[href="${docHref(report)}"]`).first().focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(`${origin}${docHref(report)}`);
    await shot(page, "document");
    await axe(docHref(report));
    await page.locator("#d-title").focus();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("Annual report 2025, final");
    await page.keyboard.press("Enter");
    await page.waitForURL(/done=saved/);
    assert.match(await page.locator(".message.notice").innerText(), /saved/);
    await page.goto(`${origin}/tester/docs/${report.name}`);
    assert.equal(await page.locator("h1").innerText(), "Annual report 2025, final");
  });

  test("a refused change shows the API's rule in words beside the field", async () => {
    await page.goto(`${origin}${docHref(report)}`);
    await page.fill("#d-soundUrl", "https://sounds.example/theme.wav");
    await page.click("form.stack button[type=submit]");
    assert.match(await page.locator(".field-error").innerText(), /\.mp3 or \.m3u/);
    assert.equal(await page.locator("#d-soundUrl").getAttribute("aria-invalid"), "true");
    await shot(page, "document-error");
  });

  test("makes a document private, and it leaves the profile", async () => {
    await page.goto(`${origin}/tester`);
    assert.ok((await page.locator("main, body").first().innerText()).includes("Field notes"));
    await page.goto(`${origin}${docHref(notes)}`);
    await page.check('input[name="access"][value="private"]');
    await page.click("form.stack button[type=submit]");
    await page.waitForURL(/done=saved/);
    await page.goto(`${origin}/tester`);
    assert.ok(!(await page.locator("body").innerText()).includes("Field notes"));
    const after = await fx.server.services.store.documents.getById(notes.accountId, notes.documentId);
    assert.equal(after?.access, "private");
  });

  test("adds a key, uses it with the API, revokes it", async () => {
    await page.goto(`${origin}/app/keys`);
    await axe("/app/keys");
    await page.click("form.add-key button");
    const apiKey = await page.locator("#new-api-key").innerText();
    const apiSecret = await page.locator("#new-api-secret").innerText();
    assert.match(apiKey, /^[a-z0-9]{32}$/);
    assert.match(await page.locator(".settings").innerText(), new RegExp(`${origin.replace(/[.:/]/g, "\\$&")}/1_0`));
    await shot(page, "keys-new");
    const client = new QuireClient({ baseUrl: origin, apiKey, apiSecret });
    const list = await client.call("documents.list", { pageSize: "0" });
    assert.equal(list.rsp.stat, "ok");
    page.once("dialog", (d) => void d.accept());
    await page.click(`form[action="/app/keys/revoke"]:has(input[value="${apiKey}"]) button`);
    await page.waitForURL(/done=revoked/);
    const refused = await client.call("documents.list", { pageSize: "0" });
    assert.equal(refused.rsp.stat, "fail");
    assert.equal(refused.rsp._content?.error?.code, "010");
  });

  test("deletes a document after a confirmation", async () => {
    await page.goto(`${origin}${docHref(spare)}`);
    await page.click("a.button.danger");
    await page.waitForURL(`${origin}${docHref(spare)}/delete`);
    await axe(`${docHref(spare)}/delete`);
    await shot(page, "delete");
    await page.click("button.danger");
    await page.waitForURL(/done=deleted/);
    assert.match(await page.locator(".message.notice").innerText(), /deleted/);
    assert.equal(await page.locator(`li.doc[data-id="${spare.documentId}"]`).count(), 0);
    assert.equal(await fx.server.services.store.documents.getById(spare.accountId, spare.documentId), undefined);
  });

  test("a document's state turns from P to A on the documents page, live", async () => {
    await fx.stopWorker();
    const pending = await fx.uploadPending(PDF, { title: "Brand new" });
    await page.goto(`${origin}/app/documents`);
    assert.equal(await rowState(page, pending), "Processing…");
    // Only a published document has a reader page: no View link yet, and its date is the upload's.
    assert.equal(await page.locator(`li.doc[data-id="${pending.documentId}"] a.view`).count(), 0);
    assert.equal(await page.locator(`li.doc[data-id="${pending.documentId}"] [data-when]`).innerText(), "Uploaded");
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await fx.resumeWorker();
    await page.waitForFunction((id) => document.querySelector(`li.doc[data-id="${id}"]`)?.getAttribute("data-state") === "A", pending.documentId, { timeout: 90_000 });
    assert.equal(await rowState(page, pending), "Published");
    // Its View link came with it, without a reload.
    await page.locator(`li.doc[data-id="${pending.documentId}"] a.view`).waitFor();
    assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true);
    assert.match(await page.locator("#live").innerText(), /Brand new: Published/);
  });

  test("works on a phone: nothing wider than the screen", async () => {
    const phone = await newContext(browser, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, storageState: await context.storageState() });
    const w = await watchedPage(phone, origin);
    watches.push(w.watch);
    for (const [path, name] of [["/app/documents", "documents-phone"], [docHref(report), "document-phone"], ["/app/keys", "keys-phone"]] as const) {
      await w.page.goto(origin + path);
      const width = await w.page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `${path} is ${width}px wide`);
      await shot(w.page, name);
    }
    await phone.close();
  });

  test("signs out: the app asks to sign in again", async () => {
    await page.goto(`${origin}/app/documents`);
    await page.click(".app-signout button");
    await page.waitForURL(`${origin}/app/sign-in`);
    await page.goto(`${origin}/app/keys`);
    assert.match(page.url(), /\/app\/sign-in\?next=/);
  });

  test("no console error, no CSP violation, nothing from another host; axe ran on every page", () => {
    // The one refused form (test above) answers 400, which Chromium reports as a failed load.
    const errors = watches.flatMap((w) => w.errors).filter((e) => !/status of 400/.test(e));
    assert.deepEqual(errors, []);
    assert.deepEqual(watches.flatMap((w) => w.foreignRequests), []);
    assert.equal(axeChecked.length, 5);
  });
});
