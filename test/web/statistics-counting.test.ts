import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { MAX_READERS_PER_ADDRESS_DAY } from "../../src/domain/statistics.ts";
import { utcDay } from "../../src/domain/reader-identity.ts";
import type { Store } from "../../src/store/open-store.ts";
import { AppClient, appAccount } from "../helpers/app-client.ts";
import { seedDoc, accountIdOf } from "../helpers/api-seed.ts";
import { createDatabase, dropDatabase, postgresUnavailable } from "../helpers/dialects.ts";
import { until } from "../helpers/poll.ts";
import { READER_FIXTURE, READER_FIXTURE_PAGES, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";
import { dbOf } from "../helpers/store-db.ts";

const pgSkip = await postgresUnavailable();

/** A browser's user agent: a distinctive one, so the database dump can be searched for it. */
const UA = "Mozilla/5.0 (X11; Linux x86_64; QuireStatsTest) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";
const uaOf = (n: number | string) => UA.replace("QuireStatsTest", `QuireStatsTest-${n}`);

/** Loopback addresses are all this machine's: each reader of a test comes from its own (127.0.0.0/8). */
let nextAddress = 2;
const newAddress = () => `127.0.${Math.floor(nextAddress / 250)}.${(nextAddress++ % 250) + 2}`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request from a given local address (fetch cannot choose it). */
function send(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string; from: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? "GET", headers: opts.headers, localAddress: opts.from }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** Every row of every table, as text: what a dump of the database would hold. */
async function dumpDatabase(store: Store): Promise<string> {
  const tables = store.dialect === "sqlite"
    ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(dbOf(store))).rows.map((r) => r.name)
    : (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public'`.execute(dbOf(store))).rows.map((r) => r.name);
  let out = "";
  for (const t of tables) out += JSON.stringify((await sql`select * from ${sql.table(t)}`.execute(dbOf(store))).rows);
  return out;
}

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`readership counting over HTTP on ${dialect}`, { timeout: 180_000, skip: dialect === "postgres" ? pgSkip : undefined }, () => {
    let fx: WebFixture;
    let doc: DocumentRecord;
    let base: string;
    let store: Store;
    let accountId: number;
    let pgName: string | undefined;

    const readerPath = () => `/${doc.username}/docs/${doc.name}`;
    /** A reader: one address and one user agent, as a browser would send them. */
    const reader = (ua = uaOf(nextAddress), from = newAddress()) => ({
      get: (path: string, headers: Record<string, string> = {}) => send(base + path, { headers: { "user-agent": ua, ...headers }, from }),
      beacon: (path: string, body: unknown, headers: Record<string, string> = {}) =>
        send(`${base}${path}/beacon`, {
          method: "POST",
          headers: { "user-agent": ua, "content-type": "text/plain;charset=UTF-8", ...headers },
          body: typeof body === "string" ? body : JSON.stringify(body),
          from,
        }),
    });
    const report = (documentId = doc.documentId) => {
      const day = utcDay(Date.now());
      return store.statistics.report({ accountId, documentId, range: { from: day, to: day } });
    };
    /** A view from a new reader, then waits until it is counted: whatever was sent before it has been written too. */
    const settle = async (documentId = doc.documentId, path = readerPath()) => {
      const ua = uaOf(`sentinel-${nextAddress}`);
      const from = newAddress();
      const res = await reader(ua, from).get(path);
      assert.equal(res.status, 200);
      // Its key, as the server made it (the test reads the salt the server made): its row is the mark.
      const readerKey = await store.dailySalts.readerKey({ address: from, userAgent: ua, documentId, now: Date.now() });
      await until(
        async () => (await dbOf(store).selectFrom("statReaders").select("viewed").where("readerKey", "=", readerKey).executeTakeFirst())?.viewed === 1,
        20_000,
        "the sentinel view to be counted",
      );
    };

    before(async () => {
      const env: Record<string, string> = { QUIRE_PASSWORD_HASH_COST: "12" };
      if (dialect === "postgres") {
        pgName = `quire_test_${randomBytes(6).toString("hex")}`;
        env.QUIRE_DATABASE_URL = await createDatabase(pgName);
      }
      fx = await startWebFixture(env);
      base = fx.server.url;
      store = fx.server.services.store;
      accountId = await accountIdOf(fx.server, fx.server.account.apiKey);
      doc = await fx.publish(READER_FIXTURE, { title: "Counted", downloadable: "true" });
      assert.equal(doc.state, "A");
    });
    after(async () => {
      await fx?.close();
      if (pgName) await dropDatabase(pgName);
    });

    test("a reader's view counts once a day; a page turned makes it a read; pages seen make the depth curve", async () => {
      const alice = reader();
      const first = await alice.get(readerPath());
      assert.equal(first.status, 200);
      // The beacons script is added by the page's loader, which names it.
      assert.match(first.body.toString(), /"\/_assets\/reader-stats\.[0-9a-f]{16}\.js"/);
      assert.equal((await alice.get(readerPath())).status, 200); // the same reader again
      await until(async () => (await report()).totals.views === 1, 20_000, "the view to be counted");
      const res = await alice.beacon(readerPath(), { p: 3, s: 2, t: true, sh: 0, c: 0 });
      assert.equal(res.status, 204);
      await until(async () => (await report()).totals.reads === 1, 20_000, "the read to be counted");
      await settle();
      const r = await report();
      assert.equal(r.totals.views, 2, "the same reader twice is one view (and the sentinel)");
      assert.equal(r.totals.reads, 1);
      assert.deepEqual(r.depth.slice(0, 4).map((d) => d.readers), [2, 1, 1, 0]);
      assert.equal(r.depth.length, READER_FIXTURE_PAGES);
    });

    test("bots, link previews and prefetches are not counted", async () => {
      const before = (await report()).totals;
      for (const ua of [
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        "Twitterbot/1.0",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0 Safari/537.36",
        "curl/8.5.0",
      ]) {
        const bot = reader(ua);
        for (const p of [readerPath(), `${readerPath()}/embed`, `${readerPath()}/download`, `/${doc.username}`]) assert.equal((await bot.get(p)).status, 200, p);
      }
      assert.equal((await reader().get(readerPath(), { "sec-purpose": "prefetch" })).status, 200);
      assert.equal((await reader().get(readerPath(), { "sec-purpose": "prefetch;prerender" })).status, 200);
      assert.equal((await reader("").get(readerPath())).status, 200);
      await settle();
      const after = (await report()).totals;
      assert.equal(after.views, before.views + 1, "only the sentinel");
      assert.equal(after.downloads, before.downloads);
      assert.equal(after.impressions, before.impressions);
    });

    test("the account's own signed-in views are not counted; the app marks its browser, no public page does", async () => {
      await appAccount(fx.server, "tester");
      const app = new AppClient(base);
      const signedIn = await app.signIn("tester");
      assert.equal(signedIn.status, 303);
      assert.equal((await app.get("/app/documents")).status, 200);
      const cookie = app.cookies.get("quire_publisher");
      assert.ok(cookie, "the app marks the publisher's browser");
      const before = (await report()).totals;
      const owner = reader();
      assert.equal((await owner.get(readerPath(), { cookie: `quire_publisher=${cookie}` })).status, 200);
      assert.equal((await owner.get(`${readerPath()}/download`, { cookie: `quire_publisher=${cookie}` })).status, 200);
      assert.equal((await owner.beacon(readerPath(), { p: 5, s: 1, t: true }, { cookie: `quire_publisher=${cookie}` })).status, 204);
      // A forged mark (a wrong MAC) is no mark: that view counts.
      assert.equal((await reader().get(readerPath(), { cookie: `quire_publisher=${accountId}.${"A".repeat(43)}` })).status, 200);
      await settle();
      const after = (await report()).totals;
      assert.equal(after.views, before.views + 2, "the forger and the sentinel, not the owner");
      assert.equal(after.downloads, before.downloads);
    });

    test("an embed counts as embedded, with the referring site's host only", async () => {
      const res = await reader().get(`${readerPath()}/embed`, { referer: "https://blog.example.org/2026/post?reader=someone#x" });
      assert.equal(res.status, 200);
      await settle();
      const r = await report();
      assert.equal(r.totals.embeddedViews, 1);
      const ref = r.referrers.find((x) => x.host === "blog.example.org");
      assert.deepEqual(ref, { host: "blog.example.org", embedded: true, views: 1 });
      assert.ok(!(await dumpDatabase(store)).includes("reader=someone"), "never the path or query");
    });

    test("downloads and impressions are counted, a download once per reader", async () => {
      const before = (await report()).totals;
      const downloader = reader();
      for (let i = 0; i < 3; i++) assert.equal((await downloader.get(`${readerPath()}/download`)).status, 200);
      assert.equal((await reader().get(`/${doc.username}`)).status, 200);
      await settle();
      const after = (await report()).totals;
      assert.equal(after.downloads, before.downloads + 1);
      assert.equal(after.impressions, before.impressions + 1);
    });

    test("forged beacons, absurd values and floods from one address are bounded, and nothing crashes", async () => {
      // Another account's private document, never opened by these senders: their beacons count for nothing.
      const otherId = await appAccount(fx.server, "other");
      const theirs = await seedDoc(fx.server, { accountId: otherId, username: "other" }, { state: "A", access: "private", pageCount: 5, name: "secret-plan" });
      for (let i = 0; i < 20; i++) {
        assert.equal((await reader().beacon(`/other/docs/${theirs.name}`, { p: 5, s: 100, t: true, sh: 9, c: 9 })).status, 204);
      }
      const today = { from: utcDay(Date.now()), to: utcDay(Date.now()) };
      const before = (await report()).totals;
      // Absurd values from a real reader.
      const absurd = reader();
      assert.equal((await absurd.get(readerPath())).status, 200);
      for (const body of [
        { p: 1e9, s: -50, t: true }, { p: -3, s: 1e15, t: "yes" }, { p: "x" }, "not json", "[1,2]", "x".repeat(5000), "{}", "null",
        { p: Number.MAX_SAFE_INTEGER, s: Number.MAX_SAFE_INTEGER, sh: 1e9, c: 1e9 },
      ]) {
        assert.equal((await absurd.beacon(readerPath(), body)).status, 204);
      }
      // A flood: one address, a hundred user agents, each viewing and claiming a full read.
      const flooder = newAddress();
      await Promise.all(Array.from({ length: 100 }, async (_, i) => {
        const one = reader(uaOf(`flood-${i}`), flooder);
        await one.get(readerPath());
        await one.beacon(readerPath(), { p: READER_FIXTURE_PAGES, s: 30, t: true });
      }));
      await settle();
      const after = (await report()).totals;
      // The absurd reader, at most MAX_READERS_PER_ADDRESS_DAY of the flood, and the sentinel.
      assert.ok(after.views - before.views <= 1 + MAX_READERS_PER_ADDRESS_DAY + 1, `views ${after.views - before.views}`);
      assert.ok(after.reads - before.reads <= 1 + MAX_READERS_PER_ADDRESS_DAY);
      const r = await report();
      assert.ok(r.depth.every((d) => d.page <= READER_FIXTURE_PAGES));
      assert.ok(after.averageTimeSpent <= 60, `average ${after.averageTimeSpent}`);
      assert.ok(after.shares - before.shares <= 3 && after.clicks - before.clicks <= 20);
      const theirReport = await store.statistics.report({ accountId: otherId, documentId: theirs.documentId, range: today });
      assert.equal(theirReport.totals.views + theirReport.totals.reads, 0);
      assert.equal((await reader().get("/healthz")).status, 200);
    });

    test("no public page answers Set-Cookie, and the database holds no client address and no user agent", async () => {
      const visitor = reader(uaOf("cookie-check"));
      const paths = [
        readerPath(), `${readerPath()}/embed`, `${readerPath()}/download`, `/${doc.username}`, `/${doc.username}?q=Counted`,
        `/search?q=Counted`, `${readerPath()}/pages/read/1.jpg`, `${readerPath()}/text/1.json`, "/robots.txt", "/no-such-user",
      ];
      for (const p of paths) {
        const res = await visitor.get(p);
        assert.ok(res.status < 500, p);
        assert.equal(res.headers["set-cookie"], undefined, p);
      }
      const b = await visitor.beacon(readerPath(), { p: 2, s: 1, t: true });
      assert.equal(b.headers["set-cookie"], undefined);
      const html = (await visitor.get(readerPath())).body.toString();
      const asset = /\/_assets\/reader-stats\.[0-9a-f]{16}\.js/.exec(html)![0];
      assert.equal((await visitor.get(asset)).headers["set-cookie"], undefined);
      await settle();
      const dump = await dumpDatabase(store);
      assert.ok(!dump.includes("127.0."), "no client address");
      assert.ok(!dump.includes("QuireStatsTest") && !dump.includes("Mozilla"), "no user agent");
      if (store.dialect === "sqlite") {
        // The file itself (and its write-ahead log), not only what the tables answer.
        const file = fx.server.config.databaseUrl;
        for (const f of [file, `${file}-wal`]) {
          const bytes = await readFile(f).catch(() => Buffer.alloc(0));
          assert.equal(bytes.indexOf("QuireStatsTest"), -1, f);
          assert.equal(bytes.indexOf("127.0."), -1, f);
        }
      }
    });
  });
}
