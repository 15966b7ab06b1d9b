import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { createAccount, setPassword, type NewCredentials } from "../../src/accounts/account-admin.ts";
import { loadConfig } from "../../src/config.ts";
import { AppClient, givePassword, TEST_APP_ENV, TEST_PASSWORD } from "../helpers/app-client.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

const PDF = resolve(FIXTURES, "pdf-quartz-firefox-1page.pdf");

/**
 * Hostile input to the surfaces of issue 26 item 9 at the HTTP level: bulk actions, Retry, the
 * states poll, named keys, the webhook form, the home page and its setting, password rehashing.
 */
describe("the app's new surfaces under hostile input", { timeout: 120_000 }, () => {
  let server: TestServer;
  let other: NewCredentials;
  let mine: string[];
  let theirs: string[];
  let me: AppClient;

  /** A form POST with repeated names (`ids` once per document), as a browser sends checkboxes. */
  const postMany = (c: AppClient, path: string, fields: Array<[string, string]>, withToken = true) => {
    const body = new URLSearchParams(withToken ? [["_csrf", c.csrf], ...fields] : fields);
    return fetch(server.url + path, { method: "POST", redirect: "manual", headers: { cookie: c.cookieHeader(), "content-type": "application/x-www-form-urlencoded" }, body: body.toString() });
  };

  before(async () => {
    server = await startTestServer({ ...TEST_APP_ENV, QUIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT: "1000", QUIRE_SIGNIN_ATTEMPTS_PER_ADDRESS: "1000" });
    other = await createAccount(server.services.store, "other");
    await Promise.all([givePassword(server, "tester"), givePassword(server, "other")]);
    const upload = async (c: NewCredentials, title: string) => {
      const client = new QuireClient({ baseUrl: server.url, apiKey: c.apiKey, apiSecret: c.apiSecret });
      return (unwrap(await client.upload(PDF, { title })).document as { documentId: string }).documentId;
    };
    mine = [await upload(server.account, "Mine 1"), await upload(server.account, "Mine 2")];
    theirs = [await upload(other, "Theirs 1"), await upload(other, "Theirs 2")];
    me = new AppClient(server.url);
    assert.equal((await me.signIn("tester")).status, 303);
    await me.get("/app/documents");
  });
  after(() => server?.close());

  const theirRecords = () => Promise.all(theirs.map((id) => server.services.store.documents.getById(2, id)));

  test("bulk actions: another account's ids are passed over, whatever the action", async () => {
    for (const action of ["private", "public", "delete"]) {
      const r = await postMany(me, "/app/documents/bulk", [["action", action], ...theirs.map((id) => ["ids", id] as [string, string])]);
      assert.equal(r.status, 303, action);
      assert.match(r.headers.get("location") ?? "", new RegExp(`done=bulk-${action}&n=0$`));
    }
    const after = await theirRecords();
    assert.ok(after.every((d) => d !== undefined && d.access === "public"), "their documents are untouched");
    // Mixed with the account's own: only those change.
    const mixed = await postMany(me, "/app/documents/bulk", [["action", "private"], ["ids", mine[0]!], ["ids", theirs[0]!]]);
    assert.match(mixed.headers.get("location") ?? "", /n=1$/);
    assert.equal((await server.services.store.documents.getById(1, mine[0]!))?.access, "private");
    assert.equal((await theirRecords())[0]?.access, "public");
  });

  test("bulk actions: absurd counts, unknown actions, malformed ids, a foreign folder and an outside 'back' are refused or ignored", async () => {
    const many = Array.from({ length: 101 }, () => ["ids", mine[1]!] as [string, string]);
    const tooMany = await postMany(me, "/app/documents/bulk", [["action", "delete"], ...many]);
    assert.equal(tooMany.status, 400);
    assert.match(await tooMany.text(), /At most 100 documents/);
    assert.ok(await server.services.store.documents.getById(1, mine[1]!), "nothing was deleted");
    const unknown = await postMany(me, "/app/documents/bulk", [["action", "drop table"], ["ids", mine[1]!]]);
    assert.equal(unknown.status, 400);
    const none = await postMany(me, "/app/documents/bulk", [["action", "private"]]);
    assert.equal(none.status, 400);
    const junk = await postMany(me, "/app/documents/bulk", [["action", "private"], ["ids", "' or 1=1 --"], ["ids", "x".repeat(5000)]]);
    assert.match(junk.headers.get("location") ?? "", /n=0$/);
    // Their folder is no folder of mine.
    const folder = await server.services.store.folders.create(2, "their-folder-0000-0000-000000000000", { name: "Theirs", description: "" }, Date.now());
    assert.ok(folder.ok);
    const foreignFolder = await postMany(me, "/app/documents/bulk", [["action", "folder"], ["folderId", "their-folder-0000-0000-000000000000"], ["ids", mine[1]!]]);
    assert.equal(foreignFolder.status, 400);
    const away = await postMany(me, "/app/documents/bulk", [["action", "public"], ["ids", mine[1]!], ["back", "https://evil.example/"]]);
    assert.match(away.headers.get("location") ?? "", /^\/app\/documents\?done=/);
    // Without the token: 403, nothing happens.
    const forged = await postMany(me, "/app/documents/bulk", [["action", "delete"], ["ids", mine[1]!]], false);
    assert.equal(forged.status, 403);
    assert.ok(await server.services.store.documents.getById(1, mine[1]!));
  });

  test("Retry: only the account's own failed document; another's, a published one and junk change nothing", async () => {
    const store = server.services.store;
    await store.documents.markFailed(theirs[1]!, 3, "damaged", Date.now());
    const foreign = await me.post(`/app/documents/${theirs[1]}/retry`);
    assert.equal(foreign.status, 404);
    assert.equal((await store.documents.getById(2, theirs[1]!))?.state, "F", "their failed document stays failed");
    // No worker runs here: this one is still converting, which Retry leaves alone.
    const converting = await me.post(`/app/documents/${mine[1]}/retry`);
    assert.equal(converting.status, 400);
    assert.equal((await store.documents.getById(1, mine[1]!))?.state, "P");
    assert.equal((await me.post("/app/documents/..%2f..%2fetc/retry")).status, 404);
    // Twice in a row (two tabs): one new job, the second press is told it is converting already.
    const failedMine = (unwrap(await new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret }).upload(PDF, { title: "Fails" })).document as { documentId: string }).documentId;
    await store.documents.markFailed(failedMine, 3, "damaged", Date.now());
    await me.get("/app/documents");
    assert.equal((await me.post(`/app/documents/${failedMine}/retry`)).status, 303);
    assert.equal((await me.post(`/app/documents/${failedMine}/retry`)).status, 400);
    const jobs = (await store.jobs.getForDocument(failedMine)).filter((j) => j.kind === "convert-document");
    assert.equal(jobs.length, 1);
  });

  test("the states poll: another account's ids and its new documents are never answered; junk is bounded", async () => {
    const answer = await me.get(`/app/documents/states.json?ids=${[...theirs, ...mine].join(",")}&since=0`, { accept: "application/json" });
    const body = JSON.parse(answer.body) as { states: Array<{ documentId: string }>; added: Array<{ documentId: string; row: string }> };
    assert.deepEqual(body.states.map((s) => s.documentId).sort(), [...mine].sort());
    assert.ok(body.added.every((a) => !theirs.includes(a.documentId) && !a.row.includes("Theirs")));
    assert.ok(body.added.length <= 20);
    const junk = await me.get(`/app/documents/states.json?ids=${"a,".repeat(2_000)}&since=-1e309`, { accept: "application/json" });
    assert.equal(junk.status, 200);
    assert.deepEqual(JSON.parse(junk.body), { states: [], now: JSON.parse(junk.body).now });
    const signedOut = await new AppClient(server.url).get("/app/documents/states.json?since=0", { accept: "application/json" });
    assert.equal(signedOut.status, 401);
  });

  test("keys: a name is escaped and bounded; a reload of the page after makes no key; another session never sees the secret", async () => {
    await me.get("/app/keys");
    const before = (await server.services.store.accounts.keysOf(1)).length;
    const long = await me.post("/app/keys", { label: "x".repeat(101) });
    assert.equal(long.status, 400);
    const control = await me.post("/app/keys", { label: "a\u0000b" });
    assert.equal(control.status, 400);
    assert.equal((await server.services.store.accounts.keysOf(1)).length, before);
    const made = await me.post("/app/keys", { label: "<img src=x onerror=alert(1)>" });
    assert.equal(made.status, 303);
    const shown = await me.get("/app/keys?done=created");
    assert.ok(!shown.body.includes("<img src=x"), "the name is escaped");
    assert.match(shown.body, /id="new-api-secret"/);
    const again = await me.get("/app/keys?done=created");
    assert.doesNotMatch(again.body, /id="new-api-secret"/);
    assert.equal((await server.services.store.accounts.keysOf(1)).length, before + 1);
    // The other account's session, told the same address, sees nothing of it.
    const them = new AppClient(server.url);
    await them.signIn("other");
    assert.doesNotMatch((await them.get("/app/keys?done=created")).body, /id="new-api-secret"/);
  });

  test("webhooks: private and malformed addresses, unknown events, no events and CSRF are refused; the secret is shown once; another account sees none of it", async () => {
    await me.get("/app/webhooks");
    for (const url of ["http://127.0.0.1/hook", "http://169.254.169.254/latest", "javascript:alert(1)", "https://user:pass@example.com/", "x".repeat(3000)]) {
      const r = await postMany(me, "/app/webhooks", [["url", url], ["events", "document.active"]]);
      assert.equal(r.status, 400, url.slice(0, 40));
    }
    assert.equal((await postMany(me, "/app/webhooks", [["url", "https://example.com/hook"], ["events", "everything"]])).status, 400);
    assert.equal((await postMany(me, "/app/webhooks", [["url", "https://example.com/hook"]])).status, 400);
    assert.equal((await postMany(me, "/app/webhooks", [["url", "https://example.com/hook"], ["events", "document.active"]], false)).status, 403);
    assert.equal(await server.services.store.webhooks.get(1), undefined, "nothing was set");
    const set = await postMany(me, "/app/webhooks", [["url", "https://example.com/hook"], ["events", "document.active"], ["events", "document.failed"]]);
    assert.equal(set.status, 303);
    const page = await me.get("/app/webhooks");
    const secret = /<code id="webhook-secret">([^<]+)<\/code>/.exec(page.body)?.[1];
    assert.equal(secret, (await server.services.store.webhooks.getForDelivery(1))?.secret);
    assert.doesNotMatch((await me.get("/app/webhooks")).body, /webhook-secret/, "shown once");
    assert.deepEqual(await server.services.store.webhooks.get(1), { url: "https://example.com/hook", events: ["document.active", "document.failed"] });
    const them = new AppClient(server.url);
    await them.signIn("other");
    const theirPage = await them.get("/app/webhooks");
    assert.ok(!theirPage.body.includes("example.com/hook") && !theirPage.body.includes(secret!));
    // Their delete removes their (absent) webhook, never mine.
    await them.post("/app/webhooks/delete");
    assert.ok(await server.services.store.webhooks.get(1));
  });

  test("a document's folders: another account's folder or document is refused and changes nothing; CSRF as everywhere", async () => {
    await server.services.store.folders.create(1, "my-folder-00000-0000-0000-000000000000", { name: "Mine", description: "" }, Date.now());
    await me.get(`/app/documents/${mine[0]}`);
    const foreignFolder = await postMany(me, `/app/documents/${mine[0]}/folders`, [["folderIds", "their-folder-0000-0000-000000000000"]]);
    assert.equal(foreignFolder.status, 400);
    assert.deepEqual(await server.services.store.bookmarks.foldersOfDocument(1, mine[0]!), []);
    const foreignDoc = await postMany(me, `/app/documents/${theirs[0]}/folders`, [["folderIds", "my-folder-00000-0000-0000-000000000000"]]);
    assert.equal(foreignDoc.status, 404);
    assert.deepEqual(await server.services.store.bookmarks.foldersOfDocument(1, theirs[0]!), []);
    assert.equal((await postMany(me, `/app/documents/${mine[0]}/folders`, [["folderIds", "my-folder-00000-0000-0000-000000000000"]], false)).status, 403);
    const ok = await postMany(me, `/app/documents/${mine[0]}/folders`, [["folderIds", "my-folder-00000-0000-0000-000000000000"]]);
    assert.equal(ok.status, 303);
    assert.deepEqual(await server.services.store.bookmarks.foldersOfDocument(1, mine[0]!), ["my-folder-00000-0000-0000-000000000000"]);
    // Unticked: out of it again, and the bookmark that was only there goes too.
    assert.equal((await postMany(me, `/app/documents/${mine[0]}/folders`, [])).status, 303);
    assert.deepEqual(await server.services.store.bookmarks.foldersOfDocument(1, mine[0]!), []);
    // The list's filter with another account's folder shows nothing.
    const list = await me.get("/app/documents?folder=their-folder-0000-0000-000000000000");
    assert.match(list.body, /0 documents match/);
  });

  test("home: QUIRE_HOME is checked when read; a redirect goes where the operator said; explicit documents stay off the home page", async () => {
    for (const bad of ["//evil.example", "/\\evil.example", "javascript:alert(1)", "ftp://x"]) {
      assert.throws(() => loadConfig({ QUIRE_HOME: bad }), /QUIRE_HOME/, bad);
    }
    assert.equal(loadConfig({ QUIRE_HOME: "/app" }).homeRedirect, "/app");
    const redirecting = await startTestServer({ QUIRE_HOME: "/tester" });
    try {
      const r = await fetch(`${redirecting.url}/`, { redirect: "manual" });
      assert.equal(r.status, 302);
      assert.equal(r.headers.get("location"), "/tester");
    } finally {
      await redirecting.close();
    }
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const upload = async (title: string, explicit: string) => (unwrap(await client.upload(PDF, { title, explicit })).document as { documentId: string }).documentId;
    const [plain, explicit] = [await upload("Plain title here", "false"), await upload("Explicit title here", "true")];
    // No worker here: both are published as the worker would publish them.
    for (const id of [plain, explicit]) await server.services.store.documents.markActive(id, { pageCount: 1, coverWidth: 600, coverHeight: 800, description: undefined, name: undefined }, Date.now());
    const home = await fetch(`${server.url}/`);
    assert.equal(home.status, 200);
    const text = await home.text();
    assert.match(text, /Plain title here/);
    assert.doesNotMatch(text, /Explicit title here/);
  });

  test("sign-in: an older hash signs in and is rehashed with today's settings; a password changed meanwhile is not undone", async () => {
    const store = server.services.store;
    await setPassword(store, "other", TEST_PASSWORD, 13);
    const c = new AppClient(server.url);
    assert.equal((await c.signIn("other")).status, 303);
    const deadline = Date.now() + 30_000;
    let hash = (await store.accounts.signInRecord("other"))!.passwordHash!;
    while (hash.startsWith("scrypt$8192$") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      hash = (await store.accounts.signInRecord("other"))!.passwordHash!;
    }
    assert.match(hash, /^scrypt\$4096\$8\$1\$/, "rehashed with the server's setting (2^12 in tests)");
    assert.equal((await new AppClient(server.url).signIn("other")).status, 303, "and the new hash signs in");
    // The rehash replaces only the hash it read.
    assert.equal(await store.accounts.replacePasswordHash(2, "scrypt$8192$8$10$old$old", "scrypt$new"), false);
  });
});
