import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";

const pgSkip = await postgresUnavailable();

const DAY1 = Date.UTC(2026, 10, 27, 10);
const DAY2 = Date.UTC(2026, 10, 28, 0, 0, 1);
const READER = { address: "198.51.100.7", userAgent: "Mozilla/5.0 Test", documentId: "d1" };

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`daily salts on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    before(async () => {
      ({ store, url, drop } = await dialect.open());
    });
    after(async () => drop?.());

    test("processes asking at once all get the one salt of the day, and the same reader key", async () => {
      // Three stores on one database stand for three processes; each asks several times at once.
      const others = [await openStore(url), await openStore(url)];
      try {
        const all = [store, ...others];
        const salts = await Promise.all(all.flatMap((s) => [s.dailySalts.saltFor(DAY1), s.dailySalts.saltFor(DAY1 + 1000)]));
        assert.equal(new Set(salts).size, 1);
        const keys = await Promise.all(all.map((s) => s.dailySalts.readerKey({ ...READER, now: DAY1 + 5000 })));
        assert.equal(new Set(keys).size, 1);
        const rows = await dbOf(store).selectFrom("dailySalts").selectAll().execute();
        assert.deepEqual(rows.map((r) => r.day), ["2026-11-27"]);
      } finally {
        for (const s of others) await s.close();
      }
    });

    test("the same reader is one key all day, another on the next day, and yesterday's salt is gone", async () => {
      const morning = await store.dailySalts.readerKey({ ...READER, now: DAY1 });
      const evening = await store.dailySalts.readerKey({ ...READER, now: Date.UTC(2026, 10, 27, 23, 59) });
      assert.equal(morning, evening);
      assert.notEqual(await store.dailySalts.readerKey({ ...READER, documentId: "d2", now: DAY1 }), morning);
      const tomorrow = await store.dailySalts.readerKey({ ...READER, now: DAY2 });
      assert.notEqual(tomorrow, morning);
      const rows = await dbOf(store).selectFrom("dailySalts").select("day").execute();
      assert.deepEqual(rows.map((r) => r.day), ["2026-11-28"], "only today's salt is kept");
    });

    test("a salt another process made for a past day is swept by deleteBefore", async () => {
      await dbOf(store).insertInto("dailySalts").values({ day: "2026-11-20", salt: "old" }).execute();
      assert.equal(await store.dailySalts.deleteBefore(DAY2), 1);
      const rows = await dbOf(store).selectFrom("dailySalts").select("day").execute();
      assert.deepEqual(rows.map((r) => r.day), ["2026-11-28"]);
    });

    test("the database holds the salt only: no address, no user agent, no key", async () => {
      const rows = await dbOf(store).selectFrom("dailySalts").selectAll().execute();
      const text = JSON.stringify(rows);
      assert.ok(!text.includes(READER.address) && !text.includes("Mozilla"));
    });
  });
}
