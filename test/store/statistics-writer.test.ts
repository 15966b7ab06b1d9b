import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import { lastView, StatBatchBuilder, statBatchOf, statEventsOf, type LastView } from "../../src/store/stat-batch.ts";
import type { Store } from "../../src/store/open-store.ts";
import type { StatEvent } from "../../src/store/statistics.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { childrenOf, commandOf } from "../helpers/live-process.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * `store.statistics.write`, what the counter calls: on SQLite in a thread of its own
 * (sqlite-stats-writer.ts), on PostgreSQL on the pool; the batch, then the day's sweep.
 */
const pgSkip = await postgresUnavailable();

/** A process's nice value (field 19 of /proc/<pid>/stat). */
function niceOf(pid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

/** The processes this one started that run the statistics writer. */
function writerProcesses(): number[] {
  return childrenOf(process.pid).filter((pid) => commandOf(pid).includes("sqlite-stats-worker"));
}

const T0 = Date.UTC(2026, 10, 27, 9, 0, 0);
const DAY = "2026-11-27";

async function insertDoc(store: Store): Promise<{ accountId: number; documentId: string }> {
  const accountId = await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1);
  const now = Date.now();
  const doc = buildNewDocument(
    newDocumentIds(now),
    { accountId, username: "alice", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    {
      name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "",
      language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
      publishDate: undefined, folderIds: [],
    },
    now,
  );
  await store.documents.insertWithJob(doc, "convert-document");
  await dbOf(store).updateTable("documents").set({ state: "A", pageCount: 9 }).where("documentId", "=", doc.documentId).execute();
  return { accountId, documentId: doc.documentId };
}

const eventsOf = (documentId: string): StatEvent[] => [
  { kind: "view", documentId, readerKey: "r1", addressKey: "a1", at: T0, embedded: true, referrerHost: "news.example", startPage: 2 },
  { kind: "view", documentId, readerKey: "r2", addressKey: "a2", at: T0 + 1, embedded: false, referrerHost: "", startPage: 1 },
  { kind: "download", documentId, readerKey: "r2", addressKey: "a2", at: T0 + 2 },
  { kind: "beacon", documentId, readerKey: "r1", at: T0 + 20_000, report: { page: 5, seconds: 12.5, turned: true, shares: 1, clicks: 2 } },
  { kind: "impressions", documentId, at: T0 + 3, count: 4 },
  { kind: "view", documentId: "no-such-document", readerKey: "r3", addressKey: "a3", at: T0 + 4, embedded: false, referrerHost: "", startPage: 1 },
];

test("a batch is held in columns (as buffered, written and sent to the writer process) and comes out the same", () => {
  const events = eventsOf("d1");
  assert.deepStrictEqual(statEventsOf(statBatchOf(events)), events);
  assert.deepStrictEqual(statEventsOf(statBatchOf([])), []);
  // Visitors (keyed in the thread): each address and user agent crosses once however many events share it.
  const visitor = { address: "2001:db8::1", addressGroup: "2001:db8:0:0::/64", userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0" };
  const visited: StatEvent[] = [
    { kind: "view", documentId: "d1", visitor, at: T0, embedded: false, referrerHost: "", startPage: 1 },
    { kind: "download", documentId: "d1", visitor, at: T0 + 1 },
    { kind: "beacon", documentId: "d1", visitor, at: T0 + 2, report: { page: 2, seconds: 3, turned: false, shares: 0, clicks: 0 } },
    ...events,
  ];
  const packed = statBatchOf(visited);
  assert.deepStrictEqual(statEventsOf(packed), visited);
  assert.equal(packed.strings.length, 3);

  // The reader page's path (a view from its parts) fills the same columns as the event would.
  const built = new StatBatchBuilder();
  built.pushView(lastView(), "d1", T0, visitor.address, visitor.addressGroup, visitor.userAgent, true, 4, "news.example");
  built.push(visited[1]!);
  const view: StatEvent = { kind: "view", documentId: "d1", visitor, at: T0, embedded: true, startPage: 4, referrerHost: "news.example" };
  assert.deepStrictEqual(built.seal(), statBatchOf([view, visited[1]!]));
  assert.equal(built.visitorCount, 2);

  // The same visitor's view of the same document again in the batch adds nothing and is not kept;
  // another document's, another visitor's or the next day's is. The caller keeps a LastView per
  // user agent, as the reader page does: a repeat of it is left out at once, and one it no longer
  // holds (the user agent's last view went elsewhere since) by the batch's own record.
  const again = new StatBatchBuilder();
  const lasts = new Map<string, LastView>();
  const push = (documentId: string, at: number, userAgent = visitor.userAgent, address = visitor.address) => {
    const last = lasts.get(userAgent) ?? lastView();
    lasts.set(userAgent, last);
    again.pushView(last, documentId, at, address, address, userAgent, false, 1, "");
  };
  push("d1", T0);
  push("d1", T0 + 5);
  push("d2", T0 + 5);
  push("d1", T0 + 6, `${visitor.userAgent} 2`);
  push("d1", T0 + 7);
  push("d1", T0 + 8, visitor.userAgent, "192.0.2.77");
  push("d1", T0 + 9);
  push("d1", T0 + 86_400_000);
  push("d1", T0 + 86_400_001);
  again.pushView(lastView(), "d1", T0 + 86_400_002, visitor.address, visitor.addressGroup, visitor.userAgent, false, 1, "");
  assert.deepStrictEqual(statEventsOf(again.seal()).map((e) => [e.documentId, e.at]), [
    ["d1", T0], ["d2", T0 + 5], ["d1", T0 + 6], ["d1", T0 + 8], ["d1", T0 + 86_400_000],
  ]);
  assert.equal(again.repeatedViews, 5);
  // Sealed, the batch no longer leaves a visitor's address in the views kept for it.
  assert.deepStrictEqual(lasts.get(visitor.userAgent), lastView());
  // A LastView kept for another batch leaves nothing out of this one.
  const next = new StatBatchBuilder();
  const kept = lastView();
  const before = new StatBatchBuilder();
  before.pushView(kept, "d1", T0, visitor.address, visitor.addressGroup, visitor.userAgent, false, 1, "");
  next.pushView(kept, "d1", T0, visitor.address, visitor.addressGroup, visitor.userAgent, false, 1, "");
  assert.equal(next.length, 1);
  assert.equal(next.repeatedViews, 0);

  // Past its first columns' capacity, a batch grows and keeps every event.
  const many = Array.from({ length: 1000 }, (_, i): StatEvent => ({ ...view, at: T0 + i, startPage: 1 + (i % 9) }));
  assert.deepStrictEqual(statEventsOf(statBatchOf(many)), many);
});

for (const dialect of DIALECTS) {
  describe(`statistics.write on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    test("writes the batch as record does, then sweeps past days' readers and salts; a closed store refuses it", async () => {
      const { store, drop } = await dialect.open();
      try {
        const { accountId, documentId } = await insertDoc(store);
        await dbOf(store).insertInto("dailySalts").values({ day: "2026-11-26", salt: "yesterday" }).execute();
        assert.equal(await store.statistics.write(statBatchOf(eventsOf(documentId))), 5, "the unknown document's view counts for nothing");
        const r = await store.statistics.report({ accountId, documentId, range: { from: DAY, to: DAY } });
        assert.deepEqual(
          { views: r.totals.views, embedded: r.totals.embeddedViews, reads: r.totals.reads, downloads: r.totals.downloads, impressions: r.totals.impressions, shares: r.totals.shares, clicks: r.totals.clicks },
          { views: 2, embedded: 1, reads: 1, downloads: 1, impressions: 4, shares: 1, clicks: 2 },
        );
        assert.deepEqual(r.referrers.find((x) => x.host === "news.example"), { host: "news.example", embedded: true, views: 1 });
        assert.equal(r.depth.find((d) => d.page === 5)?.readers, 1);

        // The next day: an empty batch with the sweep deletes the day before's readers and salt.
        assert.equal(await store.statistics.write(statBatchOf([]), T0 + 86_400_000), 0);
        assert.equal((await dbOf(store).selectFrom("statReaders").selectAll().execute()).length, 0);
        assert.deepEqual(await dbOf(store).selectFrom("dailySalts").selectAll().execute(), []);
        assert.equal((await store.statistics.report({ accountId, documentId, range: { from: DAY, to: DAY } })).totals.views, 2, "the figures stay");
        if (dialect.name === "sqlite") {
          // Counting is background work: the writer (a process started by the first batch) yields to
          // the pages being served. (A process already at nice 10 or more, as a CI may run it, has nothing to lower.)
          const writers = writerProcesses();
          assert.equal(writers.length, 1, "one writer process");
          if (niceOf(process.pid) < 10) assert.equal(niceOf(writers[0]!), 10);
        }

        await store.close();
        await assert.rejects(store.statistics.write(statBatchOf(eventsOf(documentId))));
        if (dialect.name === "sqlite") assert.deepEqual(writerProcesses(), [], "the writer ends with the store");
      } finally {
        await drop().catch(() => undefined);
      }
    });
  });
}
