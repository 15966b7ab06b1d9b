import assert from "node:assert/strict";
import Tokens from "@fastify/csrf";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { createAccount, type NewCredentials } from "../../src/accounts/account-admin.ts";
import { APP_CHANGE_ROUTES } from "../../src/web/app/app-plugin.ts";
import { AppClient, givePassword, TEST_APP_ENV, TEST_PASSWORD } from "../helpers/app-client.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

const PDF = resolve(FIXTURES, "pdf-quartz-firefox-1page.pdf");
/** Breaks out of text, attributes (both quotes), textarea and script contexts if anything is left unescaped. */
const XSS = `</textarea></title><x-xss id=p1>"'><img src=x onerror=alert(1)>\`\${1}`;
const attrs = (setCookie: string) => setCookie.split(";").map((p) => p.trim().toLowerCase());

/** The app's security at the HTTP level: CSRF, sessions, cookies, limits, isolation, escaping (issue 14 "Must show"). */
describe("web app security", { timeout: 120_000 }, () => {
  let server: TestServer;
  let other: NewCredentials;
  let docId: string;
  let otherDocId: string;

  before(async () => {
    server = await startTestServer({ ...TEST_APP_ENV, QUIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT: "1000", QUIRE_SIGNIN_ATTEMPTS_PER_ADDRESS: "1000" });
    other = await createAccount(server.services.store, "other");
    await Promise.all([givePassword(server, "tester"), givePassword(server, "other")]);
    const upload = async (c: NewCredentials, title: string) => {
      const client = new QuireClient({ baseUrl: server.url, apiKey: c.apiKey, apiSecret: c.apiSecret });
      return (unwrap(await client.upload(PDF, { title })).document as { documentId: string }).documentId;
    };
    [docId, otherDocId] = await Promise.all([upload(server.account, "Mine"), upload(other, "Theirs")]);
  });
  after(() => server?.close());

  test("cookies: HttpOnly, SameSite, scoped to /app; no Secure on plain http", async () => {
    const c = new AppClient(server.url);
    const page = await c.get("/app/sign-in");
    // The sign-in form's CSRF secret is kept in a short pre-session (no account), not in a cookie of its own.
    assert.ok(!page.setCookies.some((s) => s.startsWith("quire_csrf=")));
    const pre = attrs(page.setCookies.find((s) => s.startsWith("quire_session="))!);
    assert.ok(pre.includes("httponly") && pre.includes("samesite=lax") && pre.includes("path=/app"), pre.join(";"));
    const preExpires = Date.parse(pre.find((a) => a.startsWith("expires="))!.slice(8));
    assert.ok(preExpires - Date.now() <= 2 * 3600_000 + 60_000, "a pre-session lasts hours, not a week");
    // Reading the form again keeps the same pre-session (nothing new is stored).
    assert.ok(!(await c.get("/app/sign-in")).setCookies.some((s) => s.startsWith("quire_session=")));
    const signed = await c.post("/app/sign-in", { username: "tester", password: TEST_PASSWORD });
    assert.equal(signed.status, 303);
    const session = attrs(signed.setCookies.find((s) => s.startsWith("quire_session="))!);
    assert.ok(session.includes("httponly") && session.includes("samesite=lax") && session.includes("path=/app"), session.join(";"));
    assert.ok(!session.includes("secure"));
    assert.ok(Date.parse(session.find((a) => a.startsWith("expires="))!.slice(8)) - Date.now() > 6 * 24 * 3600_000, "a signed-in session lasts a week");
    const device = attrs(signed.setCookies.find((s) => s.startsWith("quire_device="))!);
    assert.ok(device.includes("httponly") && device.includes("samesite=lax") && device.includes("path=/app"), device.join(";"));
    assert.ok(!device.some((a) => a.includes("tester")), "the device cookie names no account");
  });

  test("cookies are Secure whenever the public address is https", async () => {
    const https = await startTestServer({ ...TEST_APP_ENV, QUIRE_PUBLIC_URL: "https://quire.example" });
    try {
      await givePassword(https, "tester");
      const c = new AppClient(https.url);
      const page = await c.get("/app/sign-in");
      assert.ok(attrs(page.setCookies.find((s) => s.startsWith("quire_session="))!).includes("secure"));
      const signed = await c.post("/app/sign-in", { username: "tester", password: TEST_PASSWORD });
      assert.equal(signed.status, 303);
      assert.ok(attrs(signed.setCookies.find((s) => s.startsWith("quire_session="))!).includes("secure"));
      assert.ok(attrs(signed.setCookies.find((s) => s.startsWith("quire_device="))!).includes("secure"));
    } finally {
      await https.close();
    }
  });

  test("session fixation: the session id is new at sign-in; one planted beforehand is worth nothing", async () => {
    const c = new AppClient(server.url);
    c.cookies.set("quire_session", "planted-by-an-attacker");
    await c.signIn("tester");
    const first = c.cookies.get("quire_session")!;
    assert.ok(first && first !== "planted-by-an-attacker");
    // Signing in again (same browser) gives yet another id, and the previous one is ended.
    await c.get("/app/keys");
    assert.equal((await c.post("/app/sign-in", { username: "tester", password: TEST_PASSWORD })).status, 303);
    const second = c.cookies.get("quire_session")!;
    assert.notEqual(second, first);
    const replay = new AppClient(server.url);
    replay.cookies.set("quire_session", first);
    assert.equal((await replay.get("/app/documents")).status, 303);
  });

  test("sign-out ends the session on the server: its cookie, replayed, opens nothing", async () => {
    const c = new AppClient(server.url);
    await c.signIn("tester");
    const cookie = c.cookies.get("quire_session")!;
    await c.get("/app/documents");
    const out = await c.post("/app/sign-out");
    assert.equal(out.status, 303);
    assert.equal(out.location, "/app/sign-in");
    const replay = new AppClient(server.url);
    replay.cookies.set("quire_session", cookie);
    const r = await replay.get("/app/documents");
    assert.equal(r.status, 303);
    assert.match(r.location!, /^\/app\/sign-in/);
  });

  test("a new password ends every session of the account", async () => {
    const c = new AppClient(server.url);
    await c.signIn("other");
    assert.equal((await c.get("/app/documents")).status, 200);
    await givePassword(server, "other");
    assert.equal((await c.get("/app/documents")).status, 303);
  });

  test("CSRF: every change of the app refuses a request without the token, or with another session's", async () => {
    const mine = new AppClient(server.url);
    await mine.signIn("tester");
    await mine.get("/app/keys");
    const stranger = new AppClient(server.url);
    await stranger.get("/app/sign-in");
    const keysBefore = await server.services.store.accounts.keysOf(server.account.apiKey ? 1 : 0);
    assert.ok(APP_CHANGE_ROUTES.size >= 6, [...APP_CHANGE_ROUTES].join(", "));
    for (const route of APP_CHANGE_ROUTES) {
      const path = route.slice(route.indexOf(" ") + 1).replace(":documentId", docId).replace(/:[A-Za-z]+/g, "x");
      const fields = { title: "Changed by CSRF", apiKey: server.account.apiKey, username: "tester", password: TEST_PASSWORD };
      const none = await mine.post(path, { ...fields, _csrf: null });
      assert.equal(none.status, 403, `${route} without a token`);
      const foreign = await mine.post(path, { ...fields, _csrf: stranger.csrf });
      assert.equal(foreign.status, 403, `${route} with another session's token`);
      const forged = await mine.post(path, { ...fields, _csrf: "forged-token" }, { "x-csrf-token": "forged" });
      assert.equal(forged.status, 403, `${route} with a forged token`);
    }
    const doc = await server.services.store.documents.getById(1, docId);
    assert.equal(doc?.title, "Mine");
    assert.deepEqual(await server.services.store.accounts.keysOf(1), keysBefore);
    // Still signed in: the refused sign-out did nothing.
    assert.equal((await mine.get("/app/documents")).status, 200);
  });

  test("CSRF: the token is bound to the session, not to a cookie someone could plant (issue 23 item 6)", async () => {
    // What a sibling subdomain or another port of this host could do: set a CSRF cookie whose secret
    // it knows, and send a token made from that secret. Only the session's own secret counts.
    const tokens = Tokens();
    const planted = tokens.secretSync();
    const victim = new AppClient(server.url);
    await victim.signIn("tester");
    await victim.get(`/app/documents/${docId}`);
    victim.cookies.set("quire_csrf", planted);
    const forged = await victim.post(`/app/documents/${docId}`, { title: "Changed through a planted cookie", _csrf: tokens.create(planted) });
    assert.equal(forged.status, 403);
    // Another session's token (a visitor's pre-session, or another signed-in account's) is refused too.
    const stranger = new AppClient(server.url);
    await stranger.get("/app/sign-in");
    assert.equal((await victim.post(`/app/documents/${docId}`, { title: "Changed", _csrf: stranger.csrf })).status, 403);
    const otherAccount = new AppClient(server.url);
    await otherAccount.signIn("other");
    await otherAccount.get("/app/documents");
    assert.equal((await victim.post(`/app/documents/${docId}`, { title: "Changed", _csrf: otherAccount.csrf })).status, 403);
    // Planting a whole session cookie with its token only signs the browser out of its own account: nothing of the victim's changes.
    const swapped = new AppClient(server.url);
    swapped.cookies.set("quire_session", stranger.cookies.get("quire_session")!);
    const asStranger = await swapped.post(`/app/documents/${docId}`, { title: "Changed", _csrf: stranger.csrf });
    assert.equal(asStranger.status, 401, "a pre-session is signed in to no account");
    assert.equal((await server.services.store.documents.getById(1, docId))?.title, "Mine");
    // The session's own token works (the control).
    await victim.get(`/app/documents/${docId}`);
    const own = await victim.post(`/app/documents/${docId}`, { title: "Mine" });
    assert.equal(own.status, 303);
  });

  test("CSRF: a change the browser says comes from another site or a sibling origin is refused even with the token", async () => {
    const c = new AppClient(server.url);
    await c.signIn("tester");
    await c.get(`/app/documents/${docId}`);
    for (const site of ["cross-site", "same-site", "none"]) {
      const r = await c.post(`/app/documents/${docId}`, { title: `From ${site}` }, { "sec-fetch-site": site });
      assert.equal(r.status, 403, site);
    }
    assert.equal((await server.services.store.documents.getById(1, docId))?.title, "Mine");
    assert.equal((await c.post(`/app/documents/${docId}`, { title: "Mine" }, { "sec-fetch-site": "same-origin" })).status, 303);
  });

  test("no account enumeration: an unknown username and a wrong password get the same answer", async () => {
    const answer = async (username: string) => {
      const c = new AppClient(server.url);
      const r = await c.signIn(username, "wrong password!");
      return { status: r.status, body: r.body.replaceAll(username, "USER").replace(/content="[^"]+"|value="[A-Za-z0-9_-]{30,}"|nonce="[^"]+"/g, "TOKEN") };
    };
    const known = await answer("tester");
    const unknown = await answer("nobody-here");
    assert.equal(known.status, 401);
    assert.deepEqual(unknown, known);
    assert.match(known.body, /The username or password is not right/);
  });

  test("after signing in, only addresses of the app itself are followed", async () => {
    for (const next of ["https://evil.example/", "//evil.example/app", "/\\evil.example", "/app/../evil", "javascript:alert(1)"]) {
      const c = new AppClient(server.url);
      await c.get("/app/sign-in");
      const r = await c.post("/app/sign-in", { username: "tester", password: TEST_PASSWORD, next });
      assert.equal(r.location, "/app/documents", next);
    }
  });

  test("one account never sees or changes another's documents or keys", async () => {
    const c = new AppClient(server.url);
    await c.signIn("other");
    const list = await c.get("/app/documents");
    assert.ok(list.body.includes(otherDocId) && !list.body.includes(docId));
    assert.equal((await c.get(`/app/documents/${docId}`)).status, 404);
    assert.equal((await c.get(`/app/documents/${docId}/original`)).status, 404);
    assert.equal((await c.get(`/app/documents/${docId}/delete`)).status, 404);
    assert.equal((await c.post(`/app/documents/${docId}`, { title: "Taken over" })).status, 404);
    assert.equal((await c.post(`/app/documents/${docId}/delete`)).status, 404);
    const states = await c.get(`/app/documents/states.json?ids=${docId},${otherDocId}`, { accept: "application/json" });
    assert.deepEqual((JSON.parse(states.body) as { states: Array<{ documentId: string }> }).states.map((s) => s.documentId), [otherDocId]);
    const keys = await c.get("/app/keys");
    assert.ok(keys.body.includes(other.apiKey) && !keys.body.includes(server.account.apiKey));
    assert.equal((await c.post("/app/keys/revoke", { apiKey: server.account.apiKey })).status, 404);
    const mine = await server.services.store.documents.getById(1, docId);
    assert.equal(mine?.title, "Mine");
    assert.ok((await server.services.store.accounts.keysOf(1)).some((k) => k.apiKey === server.account.apiKey && k.revokedAt === null));
  });

  test("XSS: every field shown is escaped on every page", async () => {
    const store = server.services.store;
    const hostile = await store.documents.getById(1, docId);
    assert.ok(hostile);
    await store.documents.update(1, docId, {
      title: XSS, description: XSS, tags: JSON.stringify([XSS, "plain"]), orgDocName: `${XSS}.pdf`, infoLink: `javascript:alert(1)//${XSS}`,
      soundUrl: `https://x.example/${XSS}.mp3`, language: `"><x-xss>`, category: XSS, type: XSS, state: "F", errorCode: 3, errorMessage: XSS,
      updatedAt: Date.now(),
    });
    const c = new AppClient(server.url);
    await c.signIn("tester");
    for (const path of ["/app/documents", `/app/documents/${docId}`, `/app/documents/${docId}/delete`, "/app/documents?state=F"]) {
      const r = await c.get(path);
      assert.equal(r.status, 200, path);
      // The payload's own markup never reaches the page as markup, and no link is made of a javascript: address.
      assert.ok(!/<x-xss|<img src=x|<\/textarea><|href="javascript:/i.test(r.body), path);
      assert.ok(r.body.includes("&lt;x-xss"), `${path} shows the text, escaped`);
    }
    // A refused update shows what was typed, escaped too.
    const refused = await c.post(`/app/documents/${docId}`, { title: XSS, newName: XSS, access: "public" });
    assert.equal(refused.status, 400);
    assert.ok(!/<x-xss|<img src=x/i.test(refused.body));
    const states = await c.get(`/app/documents/states.json?ids=${docId}`, { accept: "application/json" });
    assert.match(states.headers.get("content-type")!, /^application\/json/);
    assert.equal(states.headers.get("x-content-type-options"), "nosniff");
  });

  test("hostile forms: wrong values get the API's rule in words; oversized bodies are refused", async () => {
    const c = new AppClient(server.url);
    await c.signIn("other");
    await c.get(`/app/documents/${otherDocId}`);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ title: "x".repeat(501) }, /A title may have at most 500 characters/],
      [{ newName: "Not A Name!" }, /An address name needs 3 to 50 characters/],
      [{ publishDate: "31/05/2024" }, /Give a date such as 2024-05-31/],
      [{ infoLink: "ftp://x.example/" }, /Give a full web address/],
      [{ soundUrl: "https://x.example/song.wav" }, /ends in \.mp3 or \.m3u/],
      [{ category: "999999" }, /Choose a category from the list/],
      [{ tags: Array.from({ length: 51 }, (_, i) => `t${i}`).join(",") }, /at most 50 tags/],
    ];
    for (const [form, message] of cases) {
      const r = await c.post(`/app/documents/${otherDocId}`, form);
      assert.equal(r.status, 400, JSON.stringify(form));
      assert.match(r.body, message);
      assert.match(r.body, /aria-invalid="true"/);
    }
    assert.equal((await server.services.store.documents.getById(2, otherDocId))?.title, "Theirs");
    const big = await c.post(`/app/documents/${otherDocId}`, { description: "x".repeat(300_000) });
    assert.equal(big.status, 413);
    // A name taken by another document of the account is the API's 201 on newName, in words.
    const second = await new QuireClient({ baseUrl: server.url, apiKey: other.apiKey, apiSecret: other.apiSecret }).upload(PDF, { name: "taken-name" });
    assert.equal(second.rsp.stat, "ok");
    const taken = await c.post(`/app/documents/${otherDocId}`, { newName: "taken-name" });
    assert.equal(taken.status, 400);
    assert.match(taken.body, /must not be the name of another of your documents/);
  });
});

describe("web app sign-in rate limit", { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ...TEST_APP_ENV, QUIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT: "3", QUIRE_SIGNIN_ATTEMPTS_PER_ADDRESS: "8" });
    await givePassword(server, "tester");
  });
  after(() => server?.close());

  test("per account: after the allowed attempts even the right password waits; unknown names are limited alike", async () => {
    for (const username of ["tester", "nobody-at-all"]) {
      const c = new AppClient(server.url);
      for (let i = 0; i < 3; i++) assert.equal((await c.signIn(username, "wrong password!")).status, 401);
      const limited = await c.signIn(username, TEST_PASSWORD);
      assert.equal(limited.status, 429, username);
      assert.match(limited.body, /Too many sign-in attempts/);
    }
  });

  test("per address: many usernames from one address are limited too", async () => {
    const c = new AppClient(server.url);
    // 6 attempts so far from this address; 2 more are allowed, then none.
    assert.equal((await c.signIn("someone-1", "wrong password!")).status, 401);
    assert.equal((await c.signIn("someone-2", "wrong password!")).status, 401);
    assert.equal((await c.signIn("someone-3", "wrong password!")).status, 429);
  });
});
