import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import { MAX_READERS_PER_ADDRESS_DAY, type BeaconReport } from "../../src/domain/statistics.ts";
import { openStore, type Store } from "../../src/store/open-store.ts";
import type { StatEvent } from "../../src/store/statistics.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

let seq = 0;
async function insertDoc(store: Store, accountId: number, username: string, pageCount: number): Promise<string> {
  const now = Date.now();
  const ids = newDocumentIds(now);
  ids.publicationId = (seq++).toString(16).padStart(8, "0") + ids.publicationId.slice(8);
  ids.documentId = `${ids.revisionId}-${ids.publicationId}`;
  const doc = buildNewDocument(
    ids,
    { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: `doc ${seq}`, slurpUrl: "", originalSize: 10, blobId: newBlobId() },
    OPTIONS,
    now,
  );
  await store.documents.insertWithJob(doc, "convert-document");
  await dbOf(store).updateTable("documents").set({ state: "A", pageCount }).where("documentId", "=", doc.documentId).execute();
  return doc.documentId;
}

const T0 = Date.UTC(2026, 10, 27, 9, 0, 0);
const DAY = "2026-11-27";
const RANGE = { from: DAY, to: DAY };
const beacon = (r: Partial<BeaconReport>): BeaconReport => ({ page: 1, seconds: 0, turned: false, shares: 0, clicks: 0, ...r });

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`statistics store on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    let alice: number;
    let bob: number;
    before(async () => {
      ({ store, url, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      bob = (await seedAccount(store, "bob", "b".repeat(32), "t".repeat(32), 1));
    });
    after(async () => drop?.());

    const view = (documentId: string, readerKey: string, at = T0, extra: Partial<{ addressKey: string; embedded: boolean; referrerHost: string; startPage: number }> = {}): StatEvent => ({
      kind: "view", documentId, readerKey, addressKey: `addr-${readerKey}`, at, embedded: false, referrerHost: "", startPage: 1, ...extra,
    });
    const report = (documentId: string) => store.statistics.report({ accountId: alice, documentId, range: RANGE });

    test("the same reader twice in a day is one view; a beacon without a view counts nothing", async () => {
      const doc = await insertDoc(store, alice, "alice", 5);
      await store.statistics.record([view(doc, "r1"), view(doc, "r1", T0 + 60_000)]);
      await store.statistics.record([view(doc, "r1", T0 + 3600_000), { kind: "beacon", documentId: doc, readerKey: "stranger", at: T0, report: beacon({ page: 5, turned: true, seconds: 100 }) }]);
      const r = await report(doc);
      assert.equal(r.totals.views, 1);
      assert.equal(r.totals.reads, 0);
      assert.deepEqual(r.depth.map((d) => d.readers), [1, 0, 0, 0, 0]);
      const readers = await dbOf(store).selectFrom("statReaders").select("readerKey").where("documentId", "=", doc).execute();
      assert.ok(!readers.some((x) => x.readerKey === "stranger"), "a beacon makes no reader row");
    });

    test("a page turned is a read; 10 s is a read only once 10 s have passed since the view", async () => {
      const doc = await insertDoc(store, alice, "alice", 4);
      await store.statistics.record([
        view(doc, "turner"),
        { kind: "beacon", documentId: doc, readerKey: "turner", at: T0 + 2000, report: beacon({ page: 2, turned: true, seconds: 2 }) },
        view(doc, "hasty"),
        // Claims 10 s one second after the view: bounded by the time that passed (1 s + slack < 10 s).
        { kind: "beacon", documentId: doc, readerKey: "hasty", at: T0 + 1000, report: beacon({ seconds: 10 }) },
        view(doc, "stayer"),
        { kind: "beacon", documentId: doc, readerKey: "stayer", at: T0 + 11_000, report: beacon({ seconds: 11 }) },
      ]);
      let r = await report(doc);
      assert.equal(r.totals.views, 3);
      assert.equal(r.totals.reads, 2, "the page turner and the one who stayed 11 s");
      // The hasty one stays on: the next beacon, later, completes the read; a read counts once.
      await store.statistics.record([
        { kind: "beacon", documentId: doc, readerKey: "hasty", at: T0 + 20_000, report: beacon({ seconds: 9 }) },
        { kind: "beacon", documentId: doc, readerKey: "turner", at: T0 + 30_000, report: beacon({ page: 4, turned: true, seconds: 20 }) },
      ]);
      r = await report(doc);
      assert.equal(r.totals.reads, 3);
      assert.deepEqual(r.depth.map((d) => d.readers), [3, 1, 1, 1]);
      assert.deepEqual(r.depth.map((d) => Math.round(d.share * 100)), [100, 33, 33, 33]);
      assert.ok(r.totals.averageTimeSpent > 0 && r.totals.averageTimeSpent <= 30);
    });

    test("absurd values are bounded: page 10⁹, negative and huge times, floods of shares and clicks", async () => {
      const doc = await insertDoc(store, alice, "alice", 3);
      const events: StatEvent[] = [view(doc, "absurd", T0, { startPage: 1e9 })];
      for (let i = 0; i < 1000; i++) {
        events.push({ kind: "beacon", documentId: doc, readerKey: "absurd", at: T0 + 20_000, report: beacon({ page: i % 2 ? 1e9 : -5, seconds: i % 2 ? 1e12 : -1e6, shares: 1e6, clicks: 1e6, turned: true }) });
      }
      await store.statistics.record(events);
      const r = await report(doc);
      assert.equal(r.totals.views, 1);
      assert.equal(r.totals.reads, 1);
      assert.equal(r.depth.length, 3);
      assert.deepEqual(r.depth.map((d) => d.readers), [1, 1, 1]);
      assert.ok(r.totals.averageTimeSpent <= 25, `time bounded by the time since the view, got ${r.totals.averageTimeSpent}`);
      assert.ok(r.totals.shares <= 3 && r.totals.clicks <= 20);
      const pages = await dbOf(store).selectFrom("statPages").select("page").where("documentId", "=", doc).execute();
      assert.ok(pages.every((p) => p.page >= 1 && p.page <= 3));
    });

    test("a flood from one address is at most a few readers, however it varies its user agent", async () => {
      const doc = await insertDoc(store, alice, "alice", 2);
      const events: StatEvent[] = [];
      for (let i = 0; i < 500; i++) {
        events.push(view(doc, `ua-${i}`, T0, { addressKey: "one-address" }));
        events.push({ kind: "beacon", documentId: doc, readerKey: `ua-${i}`, at: T0 + 15_000, report: beacon({ seconds: 15, turned: true, page: 2 }) });
      }
      await store.statistics.record(events.slice(0, 500));
      await store.statistics.record(events.slice(500));
      const r = await report(doc);
      assert.equal(r.totals.views, MAX_READERS_PER_ADDRESS_DAY);
      assert.ok(r.totals.reads <= MAX_READERS_PER_ADDRESS_DAY);
    });

    test("batch after batch, a flood's readers past the cap stay out, and a reader let in by a download still counts a view", async () => {
      const doc = await insertDoc(store, alice, "alice", 2);
      const at = (k: number) => T0 + k * 1000;
      const download = (readerKey: string, t: number): StatEvent => ({ kind: "download", documentId: doc, readerKey, addressKey: "one-flooding-address", at: t });
      const flood = (t: number) => Array.from({ length: 30 }, (_, i) => view(doc, `flood-${i}`, t, { addressKey: "one-flooding-address" }));
      // The address's places are taken by downloads (no view yet), then its flood of views is turned away, twice.
      assert.equal(await store.statistics.record(Array.from({ length: MAX_READERS_PER_ADDRESS_DAY }, (_, i) => download(`dl-${i}`, at(1)))), MAX_READERS_PER_ADDRESS_DAY);
      assert.equal(await store.statistics.record(flood(at(2))), 0);
      assert.equal(await store.statistics.record([...flood(at(3)), view(doc, "dl-0", at(3), { addressKey: "one-flooding-address" })]), 1);
      // The flood's beacons count for nothing; the reader let in reads.
      assert.equal(await store.statistics.record([
        { kind: "beacon", documentId: doc, readerKey: "flood-1", at: at(20), report: beacon({ page: 2, turned: true, seconds: 15 }) },
        { kind: "beacon", documentId: doc, readerKey: "dl-0", at: at(20), report: beacon({ page: 2, turned: true, seconds: 15 }) },
      ]), 1);
      // A view again, and a download again: written, counting nothing more.
      assert.equal(await store.statistics.record([view(doc, "dl-0", at(30), { addressKey: "one-flooding-address" }), download("dl-1", at(30))]), 2);
      const r = await report(doc);
      assert.equal(r.totals.views, 1);
      assert.equal(r.totals.reads, 1);
      assert.equal(r.totals.downloads, MAX_READERS_PER_ADDRESS_DAY);
      assert.deepEqual(r.depth.map((d) => d.readers), [1, 1]);
      const readers = await dbOf(store).selectFrom("statReaders").select("readerKey").where("documentId", "=", doc).execute();
      assert.ok(!readers.some((x) => x.readerKey.startsWith("flood-")), "a reader turned away has no row");
    });

    test("a reader who viewed in another process's batch is one view here too", async () => {
      const doc = await insertDoc(store, alice, "alice", 2);
      const other = await openStore(url);
      try {
        await store.statistics.record([view(doc, "both")]);
        assert.equal(await other.statistics.record([view(doc, "both", T0 + 1000)]), 1);
        await other.statistics.record([view(doc, "both-2")]);
        await store.statistics.record([view(doc, "both-2", T0 + 2000), view(doc, "both", T0 + 2000)]);
      } finally {
        await other.close();
      }
      assert.equal((await report(doc)).totals.views, 2);
    });

    test("an embed counts as embedded with its referring host; impressions and downloads add up", async () => {
      const doc = await insertDoc(store, alice, "alice", 2);
      await store.statistics.record([
        view(doc, "e1", T0, { embedded: true, referrerHost: "blog.example" }),
        view(doc, "e2", T0, { referrerHost: "news.example" }),
        view(doc, "e3", T0),
        { kind: "download", documentId: doc, readerKey: "e3", addressKey: "addr-e3", at: T0 },
        { kind: "download", documentId: doc, readerKey: "e3", addressKey: "addr-e3", at: T0 + 5 },
        { kind: "impressions", documentId: doc, at: T0, count: 1 },
        { kind: "impressions", documentId: doc, at: T0, count: 1 },
      ]);
      const r = await report(doc);
      assert.equal(r.totals.views, 3);
      assert.equal(r.totals.embeddedViews, 1);
      assert.equal(r.totals.downloads, 1);
      assert.equal(r.totals.impressions, 2);
      assert.deepEqual(
        r.referrers.map((x) => [x.host, x.embedded, x.views]).sort(),
        [["", false, 1], ["blog.example", true, 1], ["news.example", false, 1]],
      );
    });

    test("the account report sums its documents and never shows another account's", async () => {
      const mine = await insertDoc(store, alice, "alice", 1);
      const theirs = await insertDoc(store, bob, "bob", 1);
      await store.statistics.record([view(mine, "x1"), view(mine, "x2"), view(theirs, "x3")]);
      const all = await store.statistics.report({ accountId: alice, range: RANGE });
      assert.ok(all.topDocuments.some((d) => d.documentId === mine));
      assert.ok(!all.topDocuments.some((d) => d.documentId === theirs));
      assert.equal(all.days.length, 1);
      assert.equal(all.days[0]!.views, all.totals.views);
      const forged = await store.statistics.report({ accountId: alice, documentId: theirs, range: RANGE });
      assert.equal(forged.totals.views, 0);
      assert.deepEqual(forged.depth, []);
      const year = await store.statistics.report({ accountId: alice, range: { from: "2026-01-01", to: "2026-12-31" } });
      assert.deepEqual(year.topDocuments.map((d) => d.documentId), all.topDocuments.map((d) => d.documentId), "by months over a long period, alike");
      assert.equal(year.totals.views, all.totals.views);
      const bobs = await store.statistics.report({ accountId: bob, range: RANGE });
      assert.equal(bobs.totals.views, 1);
    });

    test("events for a document deleted meanwhile are dropped; deleting a document deletes its statistics", async () => {
      const doc = await insertDoc(store, alice, "alice", 2);
      const accountBefore = (await store.statistics.report({ accountId: alice, range: RANGE })).totals;
      await store.statistics.record([view(doc, "d1", T0, { referrerHost: "gone.example" }), { kind: "impressions", documentId: doc, at: T0, count: 1 }]);
      const accountWith = await store.statistics.report({ accountId: alice, range: RANGE });
      assert.equal(accountWith.totals.views, accountBefore.views + 1);
      assert.ok(accountWith.referrers.some((r) => r.host === "gone.example"));
      const name = (await dbOf(store).selectFrom("documents").select("name").where("documentId", "=", doc).executeTakeFirstOrThrow()).name;
      await store.documents.deleteByNames(alice, [name]);
      const accountAfter = await store.statistics.report({ accountId: alice, range: RANGE });
      assert.deepEqual(accountAfter.totals, accountBefore, "the account's figures lose the document's");
      assert.ok(!accountAfter.referrers.some((r) => r.host === "gone.example"));
      for (const table of ["statDays", "statPages", "statReferrers", "statReaders", "statMonths"] as const) {
        const rows = await dbOf(store).selectFrom(table).select("documentId").where("documentId", "=", doc).execute();
        assert.equal(rows.length, 0, table);
      }
      assert.equal(await store.statistics.record([view(doc, "d2"), { kind: "impressions", documentId: doc, at: T0, count: 1 }]), 0);
    });

    test("the next day, yesterday's readers are deleted and a returning reader is new again", async () => {
      const doc = await insertDoc(store, alice, "alice", 1);
      await store.statistics.record([view(doc, "y1")]);
      const tomorrow = T0 + 86_400_000;
      assert.ok((await store.statistics.deleteReadersBefore(tomorrow)) > 0);
      const left = await dbOf(store).selectFrom("statReaders").select("day").where("day", "<", "2026-11-28").execute();
      assert.equal(left.length, 0);
      // Yesterday's figures stay; they hold no reader.
      const r = await report(doc);
      assert.equal(r.totals.views, 1);
    });
  });
}
