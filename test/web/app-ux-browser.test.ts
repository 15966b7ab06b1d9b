import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { givePassword, signInBrowser, TEST_APP_ENV } from "../helpers/app-client.ts";
import { launchChromium, newContext, seriousViolations, watchedPage, type PageWatch } from "../helpers/browser.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/**
 * The app's rough edges of issue 26 item 9, in Debian's Chromium, wide (1366×850) and on a phone
 * (390×844): the upload page, live rows with Retry, bulk actions, named keys made once, the home
 * page, the phone header and statistics, and axe on every page of the app.
 */
const PDF = "pdf-quartz-firefox-1page.pdf";
/** Set to a folder to keep the screenshots (the reviewers looked at /work/wt/notes/shots/appux). */
const SHOTS = process.env.QUIRE_UX_SCREENSHOTS;
const WIDE = { width: 1366, height: 850 };
const PHONE = { width: 390, height: 844 };

describe("the app's rough edges, wide and on a phone", { timeout: 300_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let wide: BrowserContext;
  let page: Page;
  let origin: string;
  let published: DocumentRecord;
  const watches: PageWatch[] = [];

  const shot = async (p: Page, name: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await writeFile(`${SHOTS}/${name}.png`, await sharp(await p.screenshot({ fullPage: false })).png({ palette: true, quality: 80 }).toBuffer());
  };
  const row = (d: { documentId: string }) => page.locator(`li.doc[data-id="${d.documentId}"]`);
  /** A context signed in as tester, for a viewport; CSP bypassed only where axe is injected. */
  const signedIn = async (viewport: { width: number; height: number }, axe = false) =>
    newContext(browser, { viewport, bypassCSP: axe, storageState: await wide.storageState(), ...(viewport === PHONE ? { isMobile: true, hasTouch: true } : {}) });

  before(async () => {
    fx = await startWebFixture({ ...TEST_APP_ENV });
    origin = fx.server.url;
    await givePassword(fx.server, "tester");
    [published, browser] = await Promise.all([fx.publish(PDF, { title: "Annual report", access: "public" }), launchChromium()]);
    await fx.publish(PDF, { title: "Field notes" });
    wide = await newContext(browser, { viewport: WIDE });
    const w = await watchedPage(wide, origin);
    watches.push(w.watch);
    page = w.page;
    await signInBrowser(page, origin, "tester");
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  test("upload page: says what is chosen, keeps Upload in view with many files, says an empty file is empty and a file uploaded before was", async () => {
    for (const [viewport, name] of [[WIDE, "wide"], [PHONE, "phone"]] as const) {
      const c = await signedIn(viewport);
      const w = await watchedPage(c, origin);
      watches.push(w.watch);
      const p = w.page;
      await p.goto(`${origin}/app/upload`);
      assert.equal((await p.locator('[data-role="announce"]').innerText()).trim(), "No files chosen yet.");
      assert.ok(await p.locator('[data-role="announce"]').isVisible(), "said on the screen, not only to screen readers");
      await shot(p, `upload-empty-${name}`);
      const pdf = await readFile(join(FIXTURES, PDF));
      await p.setInputFiles('[data-role="files"]', [
        ...Array.from({ length: 6 }, (_, i) => ({ name: `copy-${i}.pdf`, mimeType: "application/pdf", buffer: pdf })),
        { name: "nothing.pdf", mimeType: "application/pdf", buffer: Buffer.alloc(0) },
      ]);
      assert.match(await p.locator('[data-role="announce"]').innerText(), /^6 files ready to upload/);
      assert.match(await p.locator(".upload-item", { hasText: "nothing.pdf" }).locator(".upload-status").innerText(), /empty \(0 bytes\)/);
      // The Upload button is on the screen without scrolling, however long the list.
      const box = await p.locator('[data-role="submit"]').boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= viewport.height, `Upload at ${JSON.stringify(box)} in ${viewport.height}px`);
      assert.ok((await p.evaluate(() => document.documentElement.scrollWidth)) <= viewport.width);
      await shot(p, `upload-chosen-${name}`);
      await c.close();
    }
  });

  test("the server says an empty file is empty (not 'not a format'), and the same file twice is kept but named", async () => {
    await page.goto(`${origin}/app/upload`);
    const send = (name: string, bytes: Buffer) =>
      page.evaluate(async ({ name, bytes }) => {
        const body = new FormData();
        body.append("file", new Blob([new Uint8Array(bytes)]), name);
        const csrf = document.querySelector('meta[name="csrf-token"]')!.getAttribute("content")!;
        const r = await fetch("/app/upload", { method: "POST", body, headers: { accept: "application/json", "x-csrf-token": csrf } });
        return { status: r.status, body: (await r.json()) as { error?: string; document?: { documentId: string; earlier?: { title: string; href: string } } } };
      }, { name, bytes: [...bytes] });
    const empty = await send("empty.pdf", Buffer.alloc(0));
    assert.equal(empty.status, 400);
    assert.match(empty.body.error ?? "", /empty/);
    const pdf = await readFile(join(FIXTURES, "pdf-rotated-page.pdf"));
    const first = await send("rotated.pdf", pdf);
    assert.equal(first.status, 201);
    assert.equal(first.body.document?.earlier, undefined);
    const second = await send("rotated again.pdf", pdf);
    assert.equal(second.status, 201, "a second copy is not refused");
    assert.deepEqual(second.body.document?.earlier, { title: "rotated", href: `/app/documents/${first.body.document!.documentId}` });
    // In the page too: the row says so, with a link to the first one.
    await page.setInputFiles('[data-role="files"]', [{ name: "third.pdf", mimeType: "application/pdf", buffer: pdf }]);
    await page.click('[data-role="submit"]');
    const note = page.locator(".upload-item", { hasText: "third.pdf" }).locator(".upload-earlier");
    await note.waitFor({ timeout: 60_000 });
    assert.equal(await note.innerText(), "This file was already uploaded as rotated.");
    assert.equal(await note.locator("a").getAttribute("href"), `/app/documents/${first.body.document!.documentId}`);
    await shot(page, "upload-duplicate-wide");
  });

  test("documents: a processing row says so without a View link, a failed one says why and retries, both turn Published with View without reload; one uploaded elsewhere appears", async () => {
    await fx.stopWorker();
    const pending = await fx.uploadPending(PDF, { title: "Still converting" });
    const failing = await fx.uploadPending(PDF, { title: "Failed once" });
    await fx.server.services.store.documents.markFailed(failing.documentId, 3, "The file is damaged and could not be read.", Date.now());
    await page.goto(`${origin}/app/documents`);
    assert.match(await row(pending).locator(".state").innerText(), /^Processing…/);
    assert.equal(await row(pending).locator("[data-when]").innerText(), "Uploaded");
    assert.equal(await row(pending).locator("a.view").count(), 0);
    assert.match(await row(failing).locator(".state").innerText(), /^Failed:\s*The file is damaged/);
    assert.equal(await row(failing).locator("a.view").count(), 0);
    await shot(page, "documents-states-wide");
    await row(failing).locator("form.retry button").click();
    await page.waitForURL(/done=retried/);
    assert.match(await row(failing).locator(".state").innerText(), /^Processing…/);
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    // Uploaded elsewhere (the API) while the page is open: it appears at the top.
    const elsewhere = await fx.uploadPending(PDF, { title: "From the API" });
    await row(elsewhere).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator("li.doc").first().getAttribute("data-id"), elsewhere.documentId);
    await fx.resumeWorker();
    for (const d of [pending, failing, elsewhere]) await row(d).locator("a.view").waitFor({ timeout: 90_000 });
    assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true);
    assert.equal(await row(failing).locator(".state").innerText(), "Published");
    assert.equal(await row(failing).locator("[data-when]").innerText(), "Published");
    await shot(page, "documents-live-wide");
  });

  test("documents: bulk access change and a title filter, by keyboard-reachable controls", async () => {
    await page.goto(`${origin}/app/documents?title=field`);
    assert.equal(await page.locator("li.doc").count(), 1);
    assert.match(await page.locator("li.doc h2").innerText(), /Field notes/);
    await page.goto(`${origin}/app/documents`);
    const ids = await page.locator("li.doc").evaluateAll((els) => els.slice(0, 2).map((e) => e.getAttribute("data-id")!));
    for (const id of ids) await page.check(`#pick-${id}`);
    assert.equal(await page.locator('[data-role="bulk-count"]').innerText(), "2 selected.");
    await page.selectOption("#bulk-action", "private");
    await page.click("#bulk button[type=submit]");
    await page.waitForURL(/done=bulk-private/);
    assert.match(await page.locator(".message.notice").innerText(), /made private/);
    for (const id of ids) assert.equal((await fx.server.services.store.documents.getById(published.accountId, id))?.access, "private");
    await shot(page, "documents-bulk-wide");
  });

  test("folders: many documents added at once, a folder block on the document's page, a folder filter in the list", async () => {
    await page.goto(`${origin}/app/folders`);
    await page.fill("#f-name", "Reading list");
    await page.click("text=Create folder");
    await page.waitForURL(/\/app\/folders\/[0-9a-f-]{36}\?done=created$/);
    const folderId = /folders\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    const boxes = page.locator('.folder-candidates input[name="documentId"]');
    assert.ok((await boxes.count()) >= 2);
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await page.click("text=Add to folder");
    await page.waitForURL(/done=added-2/);
    assert.equal(await page.locator(".folder-docs li").count(), 2);
    assert.match(await page.locator(".message.notice").innerText(), /2 documents added/);
    // The document's own page: its folders as a block of their own.
    await page.goto(`${origin}/app/documents/${published.documentId}`);
    const box = page.locator(`.doc-folders input[value="${folderId}"]`);
    const wasIn = await box.isChecked();
    await box.setChecked(!wasIn);
    await page.click(".doc-folders button[type=submit]");
    await page.waitForURL(/done=folders/);
    assert.equal(await page.locator(`.doc-folders input[value="${folderId}"]`).isChecked(), !wasIn);
    assert.equal((await fx.server.services.store.bookmarks.foldersOfDocument(published.accountId, published.documentId)).includes(folderId), !wasIn);
    await shot(page, "document-folders-wide");
    // The list's folder filter.
    await page.goto(`${origin}/app/documents`);
    await page.selectOption("#f-folder", folderId);
    await page.click("form.filters button[type=submit]");
    await page.waitForURL(/folder=/);
    const inFolder = await fx.server.services.store.bookmarks.listPage(published.accountId, { scope: { kind: "folder", folderId }, sortBy: "created", order: "asc", startIndex: 0, pageSize: 100 });
    assert.deepEqual(
      (await page.locator("li.doc").evaluateAll((els) => els.map((e) => e.getAttribute("data-id")))).sort(),
      inFolder.items.map((b) => b.documentId).sort(),
    );
    await shot(page, "documents-folder-filter-wide");
  });

  test("keys: a named key is made once; reloading the page after it makes no other and shows the secret no more", async () => {
    await page.goto(`${origin}/app/keys`);
    const before = (await fx.server.services.store.accounts.keysOf(published.accountId)).length;
    await page.fill("#key-label", "Nightly export");
    await page.click("form.add-key button[type=submit]");
    await page.waitForURL(/\/app\/keys\?done=created/);
    const apiKey = await page.locator("#new-api-key").innerText();
    assert.match(apiKey, /^[a-z0-9]{32}$/);
    assert.match(await page.locator("#new-api-secret").innerText(), /^[a-z0-9]{32}$/);
    assert.match(await page.locator("table.keys").first().innerText(), /Nightly export/);
    await shot(page, "keys-new-wide");
    await page.reload();
    assert.equal((await fx.server.services.store.accounts.keysOf(published.accountId)).length, before + 1, "a reload makes no second key");
    assert.equal(await page.locator("#new-api-secret").count(), 0, "the secret is shown once");
    assert.match(await page.locator(".message.notice").innerText(), /shown once/);
  });

  test("webhooks page: add one, its secret once, its deliveries listed (wide and phone)", async () => {
    await page.goto(`${origin}/app/webhooks`);
    await page.fill("#wh-url", "https://example.com/quire-hook");
    await page.uncheck('input[name="events"][value="comment.created"]');
    await page.click("form.stack button[type=submit]");
    await page.waitForURL(/\/app\/webhooks\?done=shown/);
    assert.match(await page.locator("#webhook-secret").innerText(), /^[a-z0-9]{32}$/);
    assert.deepEqual(await fx.server.services.store.webhooks.get(published.accountId), {
      url: "https://example.com/quire-hook", events: ["document.active", "document.failed", "document.deleted"],
    });
    // A document published now is delivered to it (the delivery may fail: example.com is not reachable here), and listed.
    await fx.publish(PDF, { title: "Hooked" });
    await page.goto(`${origin}/app/webhooks`);
    assert.equal(await page.locator("#webhook-secret").count(), 0, "the secret is shown once");
    assert.ok((await page.locator("table.deliveries tbody tr").count()) >= 1);
    await shot(page, "webhooks-wide");
    const c = await signedIn(PHONE);
    const p = await c.newPage();
    await p.goto(`${origin}/app/webhooks`);
    assert.ok((await p.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width);
    await shot(p, "webhooks-phone");
    await c.close();
  });

  test("home page: sign in, search, recent public documents (wide and phone)", async () => {
    for (const [viewport, name] of [[WIDE, "wide"], [PHONE, "phone"]] as const) {
      const c = await newContext(browser, { viewport });
      const w = await watchedPage(c, origin);
      watches.push(w.watch);
      const answer = await w.page.goto(`${origin}/`);
      assert.equal(answer?.status(), 200);
      assert.equal(await w.page.locator('a[href="/app/sign-in"]').count(), 1);
      assert.equal(await w.page.locator('form[action="/search"] input[name="q"]').count(), 1);
      assert.match(await w.page.locator("ol.cards").innerText(), /Annual report/);
      assert.ok((await w.page.evaluate(() => document.documentElement.scrollWidth)) <= viewport.width);
      await shot(w.page, `home-${name}`);
      await c.close();
    }
    const a = await newContext(browser, { viewport: WIDE, bypassCSP: true });
    const p = await a.newPage();
    await p.goto(`${origin}/`);
    assert.deepEqual(await seriousViolations(p), []);
    await a.close();
  });

  test("on a phone the header is two rows at most and no page of the app is wider than the screen", async () => {
    const c = await signedIn(PHONE);
    const w = await watchedPage(c, origin);
    watches.push(w.watch);
    const p = w.page;
    for (const path of ["/app/documents", "/app/upload", "/app/folders", "/app/keys", "/app/webhooks", "/app/statistics", "/app/comments", `/app/documents/${published.documentId}`, `/app/documents/${published.documentId}/share`]) {
      await p.goto(origin + path);
      const rows = await p.locator(".app-nav li").evaluateAll((lis) => new Set(lis.map((li) => Math.round(li.getBoundingClientRect().top))).size);
      assert.equal(rows, 1, `${path}: the navigation is one row`);
      // Its current entry is within the screen, scrolled into the line if it must be.
      const current = await p.locator('.app-nav [aria-current="page"]').boundingBox();
      if (current) assert.ok(current.x >= 0 && current.x + current.width <= PHONE.width, `${path}: current entry at ${current.x}`);
      const header = await p.locator(".app-head").boundingBox();
      assert.ok(header && header.height < 110, `${path}: header ${header?.height}px`);
      assert.ok((await p.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width, `${path} is wider than the phone`);
      if (path === "/app/statistics") {
        const table = await p.locator("#days-table").evaluate((t) => ({ scroll: t.parentElement!.scrollWidth, client: t.parentElement!.clientWidth }));
        assert.ok(table.scroll <= table.client, `the by-day table scrolls sideways: ${JSON.stringify(table)}`);
        await p.locator("#days-table").scrollIntoViewIfNeeded();
        if (SHOTS) await writeFile(`${SHOTS}/statistics-days-phone.png`, await p.screenshot({ fullPage: false }));
      }
      await shot(p, `phone${path.replace(/\//g, "-").replace(/-app-documents-[0-9a-f-]+/, "-app-document")}`);
    }
    await c.close();
  });

  test("axe finds nothing serious or critical on any page of the app, wide and on a phone", async () => {
    const folder = await fx.server.services.store.folders.create(published.accountId, "axe-folder-0000-0000-000000000000", { name: "Reports", description: "" }, Date.now());
    assert.ok(folder.ok);
    const paths = [
      "/app/documents", "/app/documents?state=F", "/app/upload", "/app/folders", `/app/folders/${folder.ok ? folder.folder.folderId : ""}`, "/app/keys", "/app/webhooks",
      "/app/statistics", "/app/comments", `/app/documents/${published.documentId}`, `/app/documents/${published.documentId}/share`,
      `/app/documents/${published.documentId}/delete`, `/app/statistics/${published.documentId}`, "/app/no-such-page",
    ];
    for (const viewport of [WIDE, PHONE]) {
      const c = await signedIn(viewport, true);
      const p = await c.newPage();
      for (const path of paths) {
        await p.goto(origin + path);
        assert.deepEqual(await seriousViolations(p), [], `${path} at ${viewport.width}px`);
      }
      await c.close();
      // The sign-in page, signed out.
      const out = await newContext(browser, { viewport, bypassCSP: true });
      const q = await out.newPage();
      await q.goto(`${origin}/app/sign-in`);
      assert.deepEqual(await seriousViolations(q), [], `sign-in at ${viewport.width}px`);
      await out.close();
    }
  });

  test("no console error, no CSP violation, nothing from another host", () => {
    // The refused empty file answers 400, which Chromium reports as a failed load.
    const errors = watches.flatMap((w) => w.errors).filter((e) => !/status of 400/.test(e));
    assert.deepEqual(errors, []);
    assert.deepEqual(watches.flatMap((w) => w.foreignRequests), []);
  });
});
