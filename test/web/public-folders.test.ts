import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { createAccount, type NewCredentials } from "../../src/accounts/account-admin.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { AppClient, givePassword, signInBrowser, TEST_APP_ENV } from "../helpers/app-client.ts";
import { appScreenshot, launchChromium, newContext, seriousViolations } from "../helpers/browser.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker } from "../helpers/test-worker.ts";
import { sdk, tokenFor } from "../helpers/v2-client.ts";

const PDF = resolve(FIXTURES, "pdf-quartz-firefox-1page.pdf");
const HOSTILE = `Reports <script>alert(1)</script> & "co"`;
const SHOWN = "50000000-0000-4000-8000-000000000001";
const HIDDEN = "50000000-0000-4000-8000-000000000002";
const THEIRS = "50000000-0000-4000-8000-000000000003";

/** Folders shown on the profile (issue 26 item 9): the app's choice, the public pages, hostile input, a real browser. */
describe("folders shown on the public profile", { timeout: 300_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let other: NewCredentials;
  let me: AppClient;
  const ids: Record<string, string> = {};

  before(async () => {
    [server, browser] = await Promise.all([startTestServer({ ...TEST_APP_ENV }), launchChromium()]);
    const store = server.services.store;
    other = await createAccount(store, "other");
    await givePassword(server, "tester");
    const now = Date.now();
    assert.ok((await store.folders.create(1, SHOWN, { name: HOSTILE, description: "Every <b>year</b>" }, now)).ok);
    assert.ok((await store.folders.create(1, HIDDEN, { name: "Secret plans", description: "" }, now)).ok);
    assert.ok((await store.folders.create(2, THEIRS, { name: "Their shelf", description: "" }, now)).ok);
    const worker = await startTestWorker(server, { startOffice: false, maxAttempts: 1 });
    try {
      const upload = async (c: { apiKey: string; apiSecret: string }, key: string, params: Record<string, string>) => {
        const client = new QuireClient({ baseUrl: server.url, apiKey: c.apiKey, apiSecret: c.apiSecret });
        ids[key] = (unwrap(await client.upload(PDF, params)).document as { documentId: string }).documentId;
      };
      await upload(server.account, "public", { title: "Annual report 2025", name: "annual", folderIds: `${SHOWN},${HIDDEN}` });
      await upload(server.account, "private", { title: "Private salaries", name: "salaries", access: "private", folderIds: `${SHOWN},${HIDDEN}` });
      await upload(server.account, "explicit", { title: "After dark", name: "after-dark", explicit: "true", description: "Words only an adult should read", folderIds: SHOWN });
      await upload(other, "theirs", { title: "Their own", name: "their-own", folderIds: THEIRS });
      for (const [key, id] of Object.entries(ids)) {
        const owner = key === "theirs" ? 2 : 1;
        for (let i = 0; i < 600 && (await store.documents.getById(owner, id))?.state === "P"; i++) await new Promise((r) => setTimeout(r, 200));
        assert.equal((await store.documents.getById(owner, id))?.state, "A", key);
      }
    } finally {
      await worker.stop();
    }
    me = new AppClient(server.url);
    assert.equal((await me.signIn("tester")).status, 303);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const page = async (path: string) => {
    const r = await fetch(server.url + path, { redirect: "manual" });
    return { status: r.status, body: await r.text(), headers: r.headers };
  };

  test("every folder starts hidden: no name on the profile, its page 404s", async () => {
    const profile = await page("/tester");
    assert.equal(profile.status, 200);
    assert.doesNotMatch(profile.body, /Reports|Secret plans|\/folders\//);
    assert.equal((await page(`/tester/folders/${SHOWN}`)).status, 404);
    const app = await me.get(`/app/folders/${SHOWN}`);
    assert.match(app.body, /<input type="checkbox" name="onProfile" value="1" aria-describedby="f-profile-hint">/, "unticked");
  });

  test("the choice is a CSRF-checked post that redirects; another account's folder cannot be shown", async () => {
    const forged = await me.post(`/app/folders/${SHOWN}/profile`, { _csrf: null, onProfile: "1" });
    assert.equal(forged.status, 403);
    assert.equal((await server.services.store.folders.get(1, SHOWN))?.onProfile, false);
    const foreign = await me.post(`/app/folders/${THEIRS}/profile`, { onProfile: "1" });
    assert.notEqual(foreign.status, 303);
    assert.equal((await server.services.store.folders.get(2, THEIRS))?.onProfile, false);
    const shown = await me.post(`/app/folders/${SHOWN}/profile`, { onProfile: "1" });
    assert.equal(shown.status, 303);
    assert.equal(shown.location, `/app/folders/${SHOWN}?done=shown`);
    const again = await me.get(shown.location!);
    assert.match(again.body, /The folder is shown on your profile/);
    assert.match(again.body, /name="onProfile" value="1" checked/);
    assert.equal((await server.services.store.folders.get(1, HIDDEN))?.onProfile, false, "the other folder stays hidden");
  });

  test("the profile lists the shown folder, escaped, with its count of public documents", async () => {
    const profile = await page("/tester");
    assert.match(profile.body, new RegExp(`<a href="/tester/folders/${SHOWN}">Reports &lt;script&gt;alert\\(1\\)&lt;/script&gt; &amp; &quot;co&quot;</a> <span class="card-meta">2 documents</span>`));
    assert.doesNotMatch(profile.body, /<script>alert/);
    assert.doesNotMatch(profile.body, /Secret plans/);
    assert.doesNotMatch((await page("/tester?page=2")).body, /profile-folders/, "listed on the first page only");
  });

  test("the folder's page lists its public, active documents; never a private one; an explicit one without cover or description", async () => {
    const folder = await page(`/tester/folders/${SHOWN}`);
    assert.equal(folder.status, 200);
    assert.match(folder.headers.get("content-security-policy") ?? "", /script-src/);
    assert.match(folder.body, /<h1>Reports &lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;co&quot;<\/h1>/);
    assert.match(folder.body, /Every &lt;b&gt;year&lt;\/b&gt;/);
    assert.match(folder.body, /href="\/tester\/docs\/annual"/);
    assert.match(folder.body, /src="\/tester\/docs\/annual\/cover\/medium/);
    assert.doesNotMatch(folder.body, /salaries|Private salaries/, "a private document is never listed");
    assert.match(folder.body, /href="\/tester\/docs\/after-dark">\s*<span class="cover-withheld">/);
    assert.doesNotMatch(folder.body, /after-dark\/cover|adult should read/);
    assert.doesNotMatch(folder.body, /<script>alert/);
  });

  test("hidden, foreign, malformed and unknown folders all 404, alike", async () => {
    for (const path of [
      `/tester/folders/${HIDDEN}`, `/tester/folders/${THEIRS}`, "/tester/folders/50000000-0000-4000-8000-00000000dead",
      "/tester/folders/..%2F..%2Fetc", "/tester/folders/%3Cscript%3E", `/nobody/folders/${SHOWN}`, `/other/folders/${SHOWN}`,
    ]) {
      const r = await page(path);
      assert.equal(r.status, 404, path);
      assert.doesNotMatch(r.body, /Secret plans|Their shelf|Reports/, path);
    }
    assert.equal((await page(`/other/folders/${THEIRS}`)).status, 404, "their folder is hidden too");
    await server.services.store.folders.setOnProfile(2, THEIRS, true);
    const theirs = await page(`/other/folders/${THEIRS}`);
    assert.equal(theirs.status, 200);
    assert.match(theirs.body, /Their own/);
    assert.equal((await page(`/tester/folders/${THEIRS}`)).status, 404, "not under the wrong username");
    assert.equal((await page("/tester/folders")).status, 301);
  });

  test("a document made private leaves the folder's page and its count at once", async () => {
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    unwrap(await client.call("document.update", { name: "annual", access: "private" }));
    try {
      assert.doesNotMatch((await page(`/tester/folders/${SHOWN}`)).body, /annual/);
      assert.match((await page("/tester")).body, /<span class="card-meta">1 document<\/span>/);
    } finally {
      unwrap(await client.call("document.update", { name: "annual", access: "public" }));
    }
  });

  test("v2: a stack's accessType is the same choice; UNLISTED by default; PRIVATE is no stack access", async () => {
    const v2 = sdk(server, await tokenFor(server));
    const plain = (await v2.post("stacks", { title: "Made by v2" })).json as unknown as string;
    assert.equal((await v2.get(`stacks/${plain}`)).json.accessType, "UNLISTED");
    assert.equal((await page(`/tester/folders/${plain}`)).status, 404);
    assert.equal((await v2.get(`stacks/${SHOWN}`)).json.accessType, "PUBLIC", "shown in the app");
    assert.equal((await v2.get(`stacks/${HIDDEN}`)).json.accessType, "UNLISTED", "an older folder");
    const shown = (await v2.post("stacks", { title: "Shown by v2", accessType: "PUBLIC" })).json as unknown as string;
    assert.equal((await page(`/tester/folders/${shown}`)).status, 200);
    assert.equal((await v2.patch(`stacks/${shown}`, { accessType: "UNLISTED" })).json.accessType, "UNLISTED");
    assert.equal((await page(`/tester/folders/${shown}`)).status, 404);
    const refused = await v2.post("stacks", { title: "Private?", accessType: "PRIVATE" });
    assert.equal(refused.status, 400);
    assert.equal((await server.services.store.folders.listPage(1, { sortBy: "name", order: "asc", startIndex: 0, pageSize: 100 })).items.some((f) => f.name === "Private?"), false);
  });

  test("in Chromium, wide and on a phone: from the profile to the folder, nothing serious for axe, no sideways scroll; hiding it in the app takes it away", async () => {
    for (const [viewport, suffix] of [[{ width: 1366, height: 850 }, ""], [{ width: 390, height: 844 }, "-phone"]] as const) {
      const ctx = await newContext(browser, { viewport });
      const p = await ctx.newPage();
      const errors: string[] = [];
      p.on("pageerror", (e) => errors.push(String(e)));
      p.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      await p.goto(`${server.url}/tester`);
      await appScreenshot(p, `profile${suffix}`);
      assert.deepEqual(await seriousViolations(p), [], `profile ${viewport.width}`);
      await p.click(`.profile-folders a[href="/tester/folders/${SHOWN}"]`);
      await p.waitForURL(new RegExp(`/tester/folders/${SHOWN}$`));
      assert.equal(await p.textContent("h1"), HOSTILE);
      assert.equal(await p.locator(".cards .card").count(), 2);
      await p.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>(".card img")].every((i) => i.complete && i.naturalWidth > 0));
      assert.equal(await p.locator(".cards .cover-withheld").count(), 1);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `folder page at ${viewport.width}px scrolls sideways by ${overflow}px`);
      assert.deepEqual(await seriousViolations(p), [], `folder page ${viewport.width}`);
      await appScreenshot(p, `folder-page${suffix}`);
      assert.deepEqual(errors, []);
      await ctx.close();
    }
    // axe is injected as a script: the app page's nonce policy would refuse it.
    const ctx = await newContext(browser, { viewport: { width: 390, height: 844 }, bypassCSP: true });
    const p = await ctx.newPage();
    await signInBrowser(p, server.url, "tester");
    await p.goto(`${server.url}/app/folders/${SHOWN}`);
    const shots = process.env.QUIRE_APP_SCREENSHOTS;
    if (shots) await p.screenshot({ path: `${shots}/app-folder-phone.png`, fullPage: true });
    assert.deepEqual(await seriousViolations(p), [], "app folder page");
    await p.uncheck("input[name=onProfile]");
    await p.click("form[action$='/profile'] button");
    await p.waitForURL(/done=hidden$/);
    assert.equal(await p.isChecked("input[name=onProfile]"), false);
    await ctx.close();
    assert.equal((await page(`/tester/folders/${SHOWN}`)).status, 404);
    assert.doesNotMatch((await page("/tester")).body, /Reports/);
  });
});
