import assert from "node:assert/strict";
import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { isSearchable, parseSearchQuery } from "../../src/domain/search-query.ts";
import type { StoreDialect } from "../../src/store/dialects/dialect.ts";
import { openDialect, openStore, type Store } from "../../src/store/open-store.ts";
import { SearchBusyError, SearchGate } from "../../src/store/search-gate.ts";
import type { SearchRequest, SearchScope } from "../../src/store/search-index.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { fillerPage, newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * Searches run bounded and, on SQLite, in threads with their own read-only connection
 * (sqlite-search-pool.ts): the answers are the very ones the engine gives on the store's own
 * connection, on both dialects.
 */

const pgSkip = await postgresUnavailable();

const QUERIES = [
  "lighthouse", "keeper log", '"lighthouse keeper"', "lighthouse -bob", "café", "cafe creme", "xylophone orchestra",
  '"the spring concert"', "quarterly -weather", "nothing", "zzz-no-such-word", "\"", "a OR b", "report",
];

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`searches through the bounded path on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    let direct: StoreDialect;
    /** SQLite only: the dialect with its threads, asked directly (what the store asks). */
    let threaded: StoreDialect | undefined;
    let alice: number;

    before(async () => {
      ({ store, url, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      const bob = (await seedAccount(store, "bob", "b".repeat(32), "s".repeat(32), 1));
      const pages = Array.from({ length: 30 }, (_, i) => fillerPage(i + 1));
      pages[20] = "Only this page mentions the xylophone orchestra, tuned for the spring concert.";
      await publishWithText(store, newStoreDoc(alice, "alice", { title: "Annual report", tags: ["lighthouse"] }), pages);
      await publishWithText(store, newStoreDoc(alice, "alice", { title: "Maritime notes" }), [
        "The lighthouse stood on the rock. Every lighthouse keeper kept a log of ships.",
        "Tuesday: the keeper wrote about the café crème served at the harbour.",
      ]);
      await publishWithText(store, newStoreDoc(alice, "alice", { title: "Lighthouse plans", access: "private" }), ["The lighthouse keeper's map."]);
      await publishWithText(store, newStoreDoc(bob, "bob", { title: "Bob's lighthouse" }), ["Lighthouse photos, and a keeper."]);
      // The engine on a connection of its own, in this thread: what every search answered before threads.
      direct = await openDialect(url);
      assert.equal(direct.runSearch, undefined, "opened without a gate, the dialect searches on its own connection");
      if (dialect.name === "sqlite") {
        threaded = await openDialect(url, new SearchGate({ concurrency: 2, queue: 100 }));
        assert.ok(threaded.runSearch, "on SQLite, searches run in threads");
      }
    });
    /** As the store did before (searchIndex): a query of no word answers nothing without asking the engine. */
    const onEngine = (req: SearchRequest) => (isSearchable(req.query) ? direct.search.search(direct.db, req) : { totalCount: 0, matches: [] });
    after(async () => {
      await direct.close();
      await threaded?.close();
      await drop();
    });

    test("every query answers the same through the store as on the engine's own connection", async () => {
      const scopes: SearchScope[] = [
        { kind: "public" },
        { kind: "public", accountId: alice },
        { kind: "account", accountId: alice, states: ["A"] },
        { kind: "account", accountId: alice, access: "private", states: ["A"] },
      ];
      let compared = 0;
      for (const q of QUERIES) {
        for (const scope of scopes) {
          for (const window of [{ startIndex: 0, pageSize: 10 }, { startIndex: 1, pageSize: 1 }, { startIndex: 0, pageSize: 0 }]) {
            const req: SearchRequest = { query: parseSearchQuery(q), scope, ...window, maxHits: 3 };
            const viaStore = await store.search.search(req);
            if (threaded && isSearchable(req.query)) assert.deepEqual(await threaded.runSearch!(req), await onEngine(req), `thread: ${q}`);
            assert.deepEqual(viaStore, await onEngine(req), `${q} ${JSON.stringify(scope)} ${JSON.stringify(window)}`);
            compared += viaStore.matches.length;
          }
        }
      }
      assert.ok(compared > 20, `the queries found documents to compare (${compared} matches)`);
    });

    test("many searches at once all answer, each its own", async () => {
      const reqs = QUERIES.map((q): SearchRequest => ({ query: parseSearchQuery(q), scope: { kind: "public" }, startIndex: 0, pageSize: 10, maxHits: 3 }));
      const together = await Promise.all(reqs.map((r) => store.search.search(r)));
      for (const [i, r] of reqs.entries()) assert.deepEqual(together[i], await onEngine(r), QUERIES[i]);
      assert.deepEqual(store.search.load(), { active: 0, waiting: 0 });
    });
  });
}

describe("the bound on searches running and waiting", () => {
  test("a gate: past the running and waiting places a search is refused at once; places come back", async () => {
    const gate = new SearchGate({ concurrency: 1, queue: 1 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = gate.run(() => held.then(() => "first"));
    const second = gate.run(async () => "second");
    assert.deepEqual(gate.load(), { active: 1, waiting: 1 });
    await assert.rejects(gate.run(async () => "third"), SearchBusyError);
    release();
    assert.deepEqual(await Promise.all([first, second]), ["first", "second"]);
    assert.deepEqual(gate.load(), { active: 0, waiting: 0 });
    assert.equal(await gate.run(async () => "again"), "again");
  });

  test("a SQLite store with one search thread and no queue refuses a second search while the first runs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quire-gate-"));
    const store = await openStore(join(dir, "quire.db"), { searchLimits: { concurrency: 1, queue: 0 } });
    try {
      const id = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      await publishWithText(store, newStoreDoc(id, "alice", { title: "Lighthouse" }), ["A lighthouse keeper."]);
      const req: SearchRequest = { query: parseSearchQuery("lighthouse"), scope: { kind: "public" }, startIndex: 0, pageSize: 10, maxHits: 3 };
      const [a, b] = await Promise.allSettled([store.search.search(req), store.search.search(req)]);
      assert.equal(a.status, "fulfilled");
      assert.equal(a.status === "fulfilled" && a.value.totalCount, 1);
      assert.ok(b.status === "rejected" && b.reason instanceof SearchBusyError, "the second is refused, not queued");
      assert.equal((await store.search.search(req)).totalCount, 1, "and the place is free again");
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a search thread that cannot open the database fails its search, not the process; the next search starts a new thread", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quire-thread-fault-"));
    const file = join(dir, "quire.db");
    const store = await openStore(file, { searchLimits: { concurrency: 1, queue: 4 } });
    const suffixes = ["", "-wal", "-shm"];
    try {
      const id = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      await publishWithText(store, newStoreDoc(id, "alice", { title: "Lighthouse" }), ["A lighthouse keeper."]);
      const req: SearchRequest = { query: parseSearchQuery("lighthouse"), scope: { kind: "public" }, startIndex: 0, pageSize: 10, maxHits: 3 };
      // The file gone from its path before the first search: the thread's read-only open fails.
      for (const x of suffixes) await rename(file + x, join(dir, `away.db${x}`)).catch(() => undefined);
      await assert.rejects(store.search.search(req), (err: Error) => !(err instanceof SearchBusyError), "the search fails with the thread's error");
      assert.deepEqual(store.search.load(), { active: 0, waiting: 0 }, "its place is free again");
      for (const x of suffixes) await rename(join(dir, `away.db${x}`), file + x).catch(() => undefined);
      assert.equal((await store.search.search(req)).totalCount, 1, "a new thread answers once the file is back");
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
