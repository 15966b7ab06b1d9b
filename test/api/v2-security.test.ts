import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { bearerTokenHash } from "../../src/domain/bearer-tokens.ts";
import { openStore } from "../../src/store/open-store.ts";
import { acceptedUrlUpload, callerOf } from "../helpers/api-client.ts";
import { AppClient, appAccount, givePassword, TEST_APP_ENV } from "../helpers/app-client.ts";
import { FIXTURES, PROJECT_ROOT, QUIRE_BIN } from "../helpers/paths.ts";
import { settled } from "../helpers/poll.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { sdk, tokenFor, v2Request } from "../helpers/v2-client.ts";
import { fixtureHost } from "../helpers/v2-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/** Hostile input on the v2 surface: tokens, other accounts' ids, odd and oversized bodies, private addresses. */

const PDF = "pdf-quartz-firefox-1page.pdf";

function quire(dataDir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [QUIRE_BIN, ...args], {
    cwd: PROJECT_ROOT, env: { ...process.env, QUIRE_DATA_DIR: dataDir, QUIRE_LOG_LEVEL: "silent" }, encoding: "utf8",
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("quire accounts create-token / list / revoke-token", () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), "quire-v2-cli-"))));
  after(() => rm(dir, { recursive: true, force: true }));

  test("the token is printed once, stored only as its SHA-256, listed by prefix, revoked by prefix", async () => {
    assert.equal(quire(dir, "accounts", "create", "alice").code, 0);
    const made = quire(dir, "accounts", "create-token", "alice");
    assert.equal(made.code, 0, made.err);
    const token = /^token: (\S+)$/m.exec(made.out)?.[1];
    assert.ok(token && token.length >= 36 && /^[A-Za-z0-9_-]+$/.test(token), made.out);
    assert.equal(quire(dir, "accounts", "create-token", "nobody").code, 1);
    const listed = quire(dir, "accounts", "list");
    const prefix = token.slice(0, 12);
    assert.match(listed.out, new RegExp(`token ${prefix}…\\talice\\t.*never used`));
    assert.ok(!listed.out.includes(token), "the list never shows the token");
    const store = await openStore(join(dir, "quire.db"));
    try {
      const rows = await dbOf(store).selectFrom("apiTokens").selectAll().execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.tokenHash, bearerTokenHash(token));
      assert.ok(!JSON.stringify(rows).includes(token.slice(4)), "no column holds the token");
      assert.ok(!(await readFile(join(dir, "quire.db"))).includes(Buffer.from(token)), "nor does the database file");
    } finally {
      await store.close();
    }
    const revoked = quire(dir, "accounts", "revoke-token", prefix);
    assert.equal(revoked.code, 0, revoked.err);
    assert.equal(quire(dir, "accounts", "revoke-token", prefix).code, 1, "gone already");
    assert.ok(!quire(dir, "accounts", "list").out.includes(prefix));
  });
});

describe("v2 hostile input", () => {
  let server: TestServer;
  let worker: TestWorker;
  let token: string;
  let other: string;
  before(async () => {
    server = await startTestServer({ QUIRE_MAX_UPLOAD_BYTES: "200000", ...TEST_APP_ENV });
    // The worker as `quire worker` runs by default: no fetch of private addresses.
    worker = await startTestWorker(server, { startOffice: false, allowPrivate: false });
    token = await tokenFor(server);
    await createAccount(server.services.store, "mallory");
    other = await tokenFor(server, "mallory");
  });
  after(async () => {
    await worker.stop();
    await server.close();
  });

  test("any wrong token is the same 401; a token is used, then revoked by DELETE /v2/oauth/access", async () => {
    const wrong = [undefined, "Bearer", `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${Buffer.from("a:b").toString("base64")}`, `Bearer ${"a".repeat(5000)}`, `bearer  ${token.replace(/.$/, (c) => (c === "A" ? "B" : "A"))}`];
    for (const header of wrong) {
      const r = await v2Request(server, "GET", "user/me", { headers: header === undefined ? {} : { Authorization: header } });
      assert.equal(r.status, 401, String(header));
      assert.deepEqual(r.json, { message: "Invalid token" });
      assert.match(r.type, /^application\/json/);
    }
    // An app session cookie is not a v2 credential.
    assert.equal((await v2Request(server, "GET", "user/me", { headers: { Cookie: "quire_session=anything" } })).status, 401);
    const mine = await tokenFor(server);
    assert.equal((await sdk(server, mine).get("user/me")).status, 200);
    const used = (await server.services.store.apiTokens.list()).filter((t) => t.lastUsedAt !== null);
    assert.ok(used.some((t) => mine.startsWith(t.prefix)), "its last use is recorded");
    assert.equal((await sdk(server, mine).delete("oauth/access")).status, 200);
    assert.equal((await sdk(server, mine).get("user/me")).status, 401);
    assert.equal((await sdk(server, token).get("user/me")).status, 200, "other tokens stay valid");
  });

  test("another account's slugs and stacks are 404 and stay as they are", async () => {
    const me = sdk(server, token);
    const them = sdk(server, other);
    const draft = (await me.post("drafts", { info: { title: "Mine" } })).json;
    const stack = (await me.post("stacks", { title: "My stack" })).json;
    for (const [method, path, body] of [
      ["GET", `drafts/${draft.slug}`], ["PATCH", `drafts/${draft.slug}`, { info: { title: "Theirs" } }], ["DELETE", `drafts/${draft.slug}`],
      ["POST", `drafts/${draft.slug}/publish`, {}], ["GET", `publications/${draft.slug}`], ["DELETE", `publications/${draft.slug}`],
      ["GET", `stacks/${stack}`], ["PATCH", `stacks/${stack}`, { title: "x" }], ["DELETE", `stacks/${stack}`], ["POST", `stacks/${stack}/items`, { slug: draft.slug }],
    ] as const) {
      const r = await v2Request(server, method, path, { headers: { Authorization: `Bearer ${other}`, "Content-Type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.deepEqual(r.json, { message: "Not Found" });
    }
    const form = new FormData();
    form.append("file", new Blob([await readFile(join(FIXTURES, PDF))]), "x.pdf");
    assert.equal((await v2Request(server, "PATCH", `drafts/${draft.slug}/upload`, { headers: { Authorization: `Bearer ${other}` }, body: form })).status, 404);
    assert.equal((await them.get("drafts")).json.count, 0);
    assert.equal((await me.get(`drafts/${draft.slug}`)).json.changes.title, "Mine");
    assert.equal((await me.get(`stacks/${stack}`)).json.title, "My stack");
  });

  test("unknown fields are dropped, __proto__ and constructor are never merged, a wrong value is a 400 naming its field", async () => {
    const c = sdk(server, token);
    const body = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"bogus":1,"info":{"title":"Odd","__proto__":{"title":"proto"},"unknownField":"x"}}';
    const r = await v2Request(server, "POST", "drafts", { headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.changes.title, "Odd");
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
    assert.ok(!("unknownField" in r.json.changes) && !("bogus" in r.json));
    const bad = await c.post("drafts", { info: { title: "x", access: "public" } });
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /access/);
    assert.ok(bad.json.fields["info.access"] ?? bad.json.fields.access, bad.text);
    const badSize = await c.get("publications?size=1000");
    assert.equal(badSize.status, 400);
    assert.match(badSize.json.message, /size/);
    const control = await c.post("drafts", { info: { title: "a\u0001b" } });
    assert.equal(control.status, 400);
    assert.match(control.json.message, /title/);
    const notJson = await v2Request(server, "POST", "drafts", { headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: "{nope" });
    assert.equal(notJson.status, 400);
    assert.equal(typeof notJson.json.message, "string");
  });

  test("an oversized JSON body is 413, an oversized upload too; nothing is left behind", async () => {
    const before = await server.countRecords();
    const big = JSON.stringify({ info: { title: "x", description: "y".repeat(400_000) } });
    const r = await v2Request(server, "POST", "drafts", { headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: big });
    assert.equal(r.status, 413);
    assert.equal(typeof r.json.message, "string");
    const draft = (await sdk(server, token).post("drafts", { info: { title: "Big" } })).json;
    const form = new FormData();
    form.append("file", new Blob([Buffer.alloc(300_000, 0x25)]), "big.pdf");
    const up = await v2Request(server, "PATCH", `drafts/${draft.slug}/upload`, { headers: { Authorization: `Bearer ${token}` }, body: form });
    assert.equal(up.status, 413, up.text);
    assert.equal((await sdk(server, token).get(`drafts/${draft.slug}`)).json.fileInfo, undefined);
    assert.equal((await server.countRecords()).documents, before.documents + 1);
  });

  test("a fileUrl to a private address is refused as v1's slurpUrl is: the fetch fails the draft's conversion", async () => {
    const files = await fixtureHost();
    try {
      const address = `${files.url}/${PDF}`;
      const c = sdk(server, token);
      const draft = (await c.post("drafts", { confirmCopyright: true, fileUrl: address, info: { title: "Private" } })).json;
      const v1 = await acceptedUrlUpload(server, callerOf(server), { slurpUrl: address });
      const v1Doc = await settled(server, String((v1 as { documentId?: string }).documentId ?? ""), 60_000);
      const v2Doc = await settled(server, draft.slug, 60_000);
      assert.equal(v2Doc.state, "F");
      assert.equal(v2Doc.errorCode, v1Doc.errorCode, "the same refusal");
      assert.equal((await c.get(`drafts/${draft.slug}`)).json.fileInfo.conversionStatus, "FAILED");
      const pub = await c.post(`drafts/${draft.slug}/publish`, { desiredName: "x" });
      assert.equal(pub.status, 400);
      assert.equal(pub.json.publishFailedReason, "file_not_converted");
      const scheme = await c.post("drafts", { fileUrl: "file:///etc/passwd", info: { title: "x" } });
      assert.equal(scheme.status, 400);
      assert.match(scheme.json.message, /fileUrl/);
    } finally {
      await files.close();
    }
  });

  test("publishing too early is a 400 with its reason; a draft is never public before it is published", async () => {
    const c = sdk(server, token);
    const empty = (await c.post("drafts", { info: { title: "No file" } })).json;
    const r = await c.post(`drafts/${empty.slug}/publish`, {});
    assert.equal(r.status, 400);
    assert.equal(r.json.publishFailedReason, "missing_file");
    assert.equal((await fetch(`${server.url}/tester/docs/${empty.slug}`)).status, 404);
    assert.equal((await c.get(`publications/${empty.slug}`)).status, 404);
  });

  test("the app's keys page makes a token shown once that works, lists it by prefix, revokes it; another account's prefix is refused", async () => {
    await givePassword(server, "tester");
    const app = new AppClient(server.url);
    assert.equal((await app.signIn("tester")).status, 303);
    await app.get("/app/keys");
    const made = await app.post("/app/keys/tokens");
    // Post/redirect/get (issue 26 item 9): the page after the redirect shows the token, once.
    assert.equal(made.status, 303);
    const shown = await app.get(made.location!.replace(/#.*$/, ""));
    const token = /<code id="new-token-value">([^<]+)<\/code>/.exec(shown.body)?.[1];
    assert.ok(token, "the new token is shown");
    assert.equal((await sdk(server, token).get("user/me")).json.username, "tester");
    const page = await app.get("/app/keys");
    assert.ok(page.body.includes(`${token.slice(0, 12)}…`) && !page.body.includes(token), "listed by prefix only");
    await appAccount(server, "eve");
    const eve = new AppClient(server.url);
    await eve.signIn("eve");
    await eve.get("/app/keys");
    assert.equal((await eve.post("/app/keys/tokens/revoke", { prefix: token.slice(0, 12) })).status, 404);
    assert.equal((await sdk(server, token).get("user/me")).status, 200);
    assert.equal((await app.post("/app/keys/tokens/revoke", { prefix: token.slice(0, 12) })).status, 303);
    assert.equal((await sdk(server, token).get("user/me")).status, 401);
  });

  test("CORS: a preflight from any origin is answered without a token; answers allow any origin and never credentials", async () => {
    const pre = await v2Request(server, "OPTIONS", "drafts/abc/upload", { headers: { Origin: "https://app.example", "Access-Control-Request-Method": "PATCH", "Access-Control-Request-Headers": "authorization" } });
    assert.equal(pre.status, 200);
    assert.equal(pre.headers["access-control-allow-origin"], "*");
    assert.match(pre.headers["access-control-allow-methods"] ?? "", /PATCH/);
    assert.match(pre.headers["access-control-allow-headers"] ?? "", /Authorization/i);
    assert.equal(pre.headers["access-control-allow-credentials"], undefined);
    const get = await v2Request(server, "GET", "user/me", { headers: { Origin: "https://app.example", Authorization: `Bearer ${token}` } });
    assert.equal(get.headers["access-control-allow-origin"], "*");
    const denied = await v2Request(server, "GET", "user/me", { headers: { Origin: "https://app.example" } });
    assert.equal(denied.headers["access-control-allow-origin"], "*", "a browser app can read the 401");
  });
});

describe("v2 token guessing", () => {
  test("past 20 failed attempts an address is answered 429 without a lookup, its valid tokens too, until its window ends", async () => {
    const server = await startTestServer();
    try {
      const token = await tokenFor(server);
      for (let i = 0; i < 20; i++) assert.equal((await v2Request(server, "GET", "user/me", { headers: { Authorization: `Bearer qv2_${"x".repeat(43)}${i}` } })).status, 401);
      const limited = await v2Request(server, "GET", "user/me", { headers: { Authorization: `Bearer qv2_${"y".repeat(43)}` } });
      assert.equal(limited.status, 429);
      assert.equal(typeof limited.json.message, "string");
      assert.equal((await sdk(server, token).get("user/me")).status, 429);
    } finally {
      await server.close();
    }
  });
});

describe("v2 faults", () => {
  test("a client that leaves in the middle of an upload leaves no file and no change behind", async () => {
    const server = await startTestServer();
    try {
      const token = await tokenFor(server);
      const draft = (await sdk(server, token).post("drafts", { info: { title: "Half" } })).json;
      const { connect } = await import("node:net");
      const { port } = new URL(server.url);
      const boundary = "leavingBoundary";
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1", () => {
          socket.write(`PATCH /v2/drafts/${draft.slug}/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000000\r\n\r\n`);
          socket.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n${"x".repeat(100_000)}`);
          setImmediate(() => {
            socket.destroy();
            resolve();
          });
        });
        socket.on("error", reject);
      });
      const { until } = await import("../helpers/poll.ts");
      await until(async () => (await server.listBlobFiles()).length === 0, 10_000, "the spooled part removed");
      assert.equal((await sdk(server, token).get(`drafts/${draft.slug}`)).json.fileInfo, undefined);
    } finally {
      await server.close();
    }
  });

  test("the database gone: a 500 with a plain message, nothing of the error", async () => {
    const server = await startTestServer();
    const token = await tokenFor(server);
    await server.services.store.close();
    try {
      const r = await sdk(server, token).get("publications");
      assert.equal(r.status, 500);
      assert.deepEqual(r.json, { message: "Internal error" });
    } finally {
      await server.close().catch(() => {});
    }
  });
});
