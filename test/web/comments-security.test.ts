import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { rawHttp } from "../helpers/api-client.ts";
import { seedDoc } from "../helpers/api-seed.ts";
import { createDatabase, dropDatabase, postgresUnavailable } from "../helpers/dialects.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Hostile readers (decisions §16): 10,000 comments and ratings from one address bounded by the
 * per-address limits, the honeypot answered exactly as a success, cross-site forms refused,
 * private documents commentable only at their address, no comment or rating on a document that
 * is not published, oversized input refused, and a write failing mid-way: a plain 500, nothing
 * half-written, and the next post works once the fault is gone.
 */

/** A form posted as a browser would, through the client's raw hatch: a connection each, half the processor time fetch took over the flood. */
async function post(server: TestServer, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const body = new URLSearchParams(fields).toString();
  const all = { "content-type": "application/x-www-form-urlencoded", "user-agent": "hostile", ...headers, "content-length": String(Buffer.byteLength(body)) };
  const res = await rawHttp(server.url, { method: "POST", path, headers: Object.entries(all), body });
  return { status: res.status, body: res.body };
}

const countRows = async (server: TestServer, table: "documentComments" | "documentRatings") =>
  Number((await dbOf(server.services.store).selectFrom(table).select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);

/** Runs `n` tasks with at most `width` at a time; answers their results in order. */
async function pool<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await task(i);
    }
  }));
  return out;
}

describe("hostile readers", () => {
  let server: TestServer;
  const owner = { accountId: 1, username: "tester" };

  before(async () => {
    // The default limits: 5 comments and 30 ratings from one address, then one more every 15 minutes / that.
    server = await startTestServer();
  });
  after(async () => server?.close());

  test("10,000 comments and 10,000 ratings from one address are bounded by the per-address limits", async () => {
    await seedDoc(server, owner, { name: "flooded", state: "A" });
    // What drains while the flood lasts is let through as well: one comment each 3 minutes, one rating each 30 s.
    const drained = (since: number, everyMs: number) => Math.ceil((Date.now() - since) / everyMs);
    let since = Date.now();
    const comments = await pool(10_000, 32, (i) => post(server, "/tester/docs/flooded/comments", { author: `bot ${i}`, text: `spam ${i}` }, { accept: "application/json" }));
    const taken = comments.filter((r) => r.status === 200).length;
    assert.ok(taken <= 5 + drained(since, 180_000), `at most the burst (and what drained meanwhile) is taken: ${taken}`);
    assert.ok(taken >= 1);
    assert.equal(comments.filter((r) => r.status === 429).length, 10_000 - taken, "every other one refused");
    assert.equal(JSON.parse(comments.find((r) => r.status === 429)!.body).message, "You have sent several comments in a short time. Please wait a few minutes and try again.");
    assert.equal(await countRows(server, "documentComments"), taken);
    // A new user agent each time is a new reader each time: the address still bounds them.
    since = Date.now();
    const ratings = await pool(10_000, 32, (i) => post(server, "/tester/docs/flooded/rating", { stars: "1" }, { accept: "application/json", "user-agent": `ua-${i}` }));
    const rated = ratings.filter((r) => r.status === 200).length;
    assert.ok(rated <= 30 + drained(since, 30_000) && rated >= 1, `ratings bounded: ${rated}`);
    assert.equal(await countRows(server, "documentRatings"), rated);
  });

  test("a bot filling the honeypot gets the very answer a person gets, and nothing is stored", async () => {
    const fresh = await startTestServer();
    try {
      await seedDoc(fresh, owner, { name: "potted", state: "A" });
      const person = await post(fresh, "/tester/docs/potted/comments", { author: "Ann", text: "Real words", website: "" });
      const bot = await post(fresh, "/tester/docs/potted/comments", { author: "Bot", text: "Buy now", website: "https://spam.example" });
      assert.equal(bot.status, person.status);
      assert.equal(bot.body, person.body, "the same page, byte for byte");
      const botJson = await post(fresh, "/tester/docs/potted/comments", { author: "Bot", text: "Buy now", website: "x" }, { accept: "application/json" });
      assert.deepEqual(JSON.parse(botJson.body), { message: "Thank you. Your comment will appear once the publisher has approved it." });
      const rows = await dbOf(fresh.services.store).selectFrom("documentComments").select("author").execute();
      assert.deepEqual(rows.map((r) => r.author), ["Ann"]);
    } finally {
      await fresh.close();
    }
  });

  test("forms sent from another site are refused and store nothing", async () => {
    await seedDoc(server, owner, { name: "crossed", state: "A" });
    const before = await countRows(server, "documentComments");
    const hostile: Array<Record<string, string>> = [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.example" }, { origin: "null" }];
    for (const headers of hostile) {
      const c = await post(server, "/tester/docs/crossed/comments", { author: "a", text: "b" }, { ...headers, accept: "application/json" });
      assert.equal(c.status, 403, JSON.stringify(headers));
      const r = await post(server, "/tester/docs/crossed/rating", { stars: "5" }, { ...headers, "user-agent": `x${JSON.stringify(headers)}` });
      assert.equal(r.status, 403);
    }
    assert.equal(await countRows(server, "documentComments"), before);
    const ok = await post(server, "/tester/docs/crossed/comments", { author: "a", text: "b" }, { "sec-fetch-site": "same-origin", origin: server.url });
    assert.ok(ok.status === 200 || ok.status === 429, `same origin accepted (or limited): ${ok.status}`);
  });

  test("private documents: only at their address; documents not published take nothing", async () => {
    const fresh = await startTestServer();
    try {
      const priv = await seedDoc(fresh, owner, { access: "private", state: "A" });
      assert.equal(priv.name, priv.documentId);
      const atAddress = await post(fresh, `/tester/docs/${priv.documentId}/comments`, { author: "Friend", text: "Got the link" });
      assert.equal(atAddress.status, 200);
      const guessed = `${priv.revisionId}-${"0".repeat(32)}`;
      assert.equal((await post(fresh, `/tester/docs/${guessed}/comments`, { author: "x", text: "y" })).status, 404);
      assert.equal((await post(fresh, `/tester/docs/${guessed}/rating`, { stars: "1" })).status, 404);
      // the comments' page of a private document is never indexed
      const page = await fetch(`${fresh.url}/tester/docs/${priv.documentId}/comments`);
      assert.equal(page.headers.get("x-robots-tag"), "noindex, nofollow");
      for (const state of ["P", "F"] as const) {
        const d = await seedDoc(fresh, owner, { name: `state-${state.toLowerCase()}`, state });
        assert.equal((await post(fresh, `/tester/docs/${d.name}/comments`, { author: "x", text: "y" })).status, 404);
        assert.equal((await post(fresh, `/tester/docs/${d.name}/rating`, { stars: "3" })).status, 404);
      }
      assert.equal((await post(fresh, "/tester/docs/no-such-doc/comments", { author: "x", text: "y" })).status, 404);
      assert.equal((await post(fresh, "/nobody/docs/x/rating", { stars: "3" })).status, 404);
      assert.equal(await countRows(fresh, "documentComments"), 1);
      assert.equal(await countRows(fresh, "documentRatings"), 0);
    } finally {
      await fresh.close();
    }
  });

  test("oversized and malformed input: the reason said, the words kept, nothing stored", async () => {
    const fresh = await startTestServer();
    try {
      await seedDoc(fresh, owner, { name: "sized", state: "A" });
      const json = { accept: "application/json" };
      const long = await post(fresh, "/tester/docs/sized/comments", { author: "a", text: "x".repeat(2001) }, json);
      assert.equal(long.status, 400);
      assert.deepEqual(JSON.parse(long.body), { message: "A comment may have at most 2000 characters.", field: "text" });
      assert.equal((await post(fresh, "/tester/docs/sized/comments", { author: "a", text: "é".repeat(2000) }, json)).status, 200, "2,000 characters, not bytes");
      assert.equal(JSON.parse((await post(fresh, "/tester/docs/sized/comments", { author: "n".repeat(81), text: "t" }, json)).body).field, "author");
      assert.equal(JSON.parse((await post(fresh, "/tester/docs/sized/comments", { author: " \u202e\u0007 ", text: "t" }, json)).body).field, "author", "controls alone are no name");
      const page = await post(fresh, "/tester/docs/sized/comments", { author: `"><script>x()</script>`, text: "" });
      assert.equal(page.status, 400);
      assert.ok(page.body.includes(`value="&quot;&gt;&lt;script&gt;x()&lt;/script&gt;"`), "the name kept, escaped");
      const huge = await post(fresh, "/tester/docs/sized/comments", { author: "a", text: "y".repeat(40_000) }, json);
      assert.equal(huge.status, 413);
      assert.deepEqual(JSON.parse(huge.body), { message: "What was sent is too large." });
      assert.equal(await countRows(fresh, "documentComments"), 1);
    } finally {
      await fresh.close();
    }
  });
});

const pgSkip = await postgresUnavailable();

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`a comment whose webhook delivery cannot be written (${dialect})`, { skip: dialect === "postgres" ? pgSkip : undefined }, () => {
    test("a plain 500 that names nothing, neither comment nor delivery kept, and the next post works once the table is back", async () => {
      const dbName = dialect === "postgres" ? `quire_test_${randomBytes(6).toString("hex")}` : undefined;
      const server = await startTestServer(dbName ? { QUIRE_DATABASE_URL: await createDatabase(dbName) } : {});
      try {
        await seedDoc(server, { accountId: 1, username: "tester" }, { name: "fragile", state: "A" });
        await server.services.store.webhooks.set(1, { url: "https://hooks.example.com/", events: ["comment.created"] }, "k".repeat(32), Date.now());
        const db = dbOf(server.services.store);
        // The comment's insert succeeds, then the delivery's fails: the transaction holds both or neither.
        await sql`alter table webhook_deliveries rename to webhook_deliveries_away`.execute(db);
        const failed = await post(server, "/tester/docs/fragile/comments", { author: "a", text: "while broken" }, { accept: "application/json" });
        assert.equal(failed.status, 500);
        assert.deepEqual(JSON.parse(failed.body), { message: "Something went wrong on our side. Please try again later." });
        const page = await post(server, "/tester/docs/fragile/comments", { author: "a", text: "while broken" });
        assert.equal(page.status, 500);
        assert.doesNotMatch(page.body, /webhook|relation|table|sqlite|postgres|stack/i);
        await sql`alter table webhook_deliveries_away rename to webhook_deliveries`.execute(db);
        assert.deepEqual(await db.selectFrom("documentComments").select("body").execute(), [], "no comment without its delivery");
        const ok = await post(server, "/tester/docs/fragile/comments", { author: "a", text: "back again" }, { accept: "application/json" });
        assert.equal(ok.status, 200, ok.body);
        assert.deepEqual((await db.selectFrom("documentComments").select("body").execute()).map((r) => r.body), ["back again"]);
        assert.deepEqual((await db.selectFrom("webhookDeliveries").select("event").execute()).map((d) => d.event), ["comment.created"]);
      } finally {
        await server.close();
        if (dbName) await dropDatabase(dbName);
      }
    });
  });
}
