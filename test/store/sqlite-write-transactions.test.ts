import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import SQLite from "better-sqlite3";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Another connection to the same SQLite file writes between a store transaction's first read and
 * its first write: the statistics writer's process does every half second, a `quire worker` as it
 * claims jobs. Begun deferred, the store's transaction held a snapshot older than that write and
 * SQLite refused its write at once (SQLITE_BUSY_SNAPSHOT, its busy timeout not consulted): the app's
 * "Approve selected" answered 500 when a statistics batch landed in between. Begun IMMEDIATE, it
 * holds the write lock from its start, so the other connection waits for it instead.
 */
describe("SQLite write transactions against another connection's writes", () => {
  let dir: string;
  let store: Store;
  let other: SQLite.Database;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "quire-immediate-"));
    store = await openStore(join(dir, "quire.db"));
    other = new SQLite(join(dir, "quire.db"));
    // The other connection does not wait: whether it could write in between is seen at once.
    other.pragma("busy_timeout = 0");
  });
  after(async () => {
    other.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("a transaction that reads, then writes, is not failed by a write landing in between; the other connection waits for it", async () => {
    const db = dbOf(store);
    let between: string | undefined;
    await db.transaction().execute(async (trx) => {
      await trx.selectFrom("dailySalts").selectAll().execute();
      try {
        other.prepare("insert into daily_salts (day, salt) values ('2026-01-01', 'other')").run();
        between = "written";
      } catch (err) {
        between = (err as { code?: string }).code;
      }
      await trx.insertInto("dailySalts").values({ day: "2026-01-02", salt: "store" }).execute();
    });
    assert.equal(between, "SQLITE_BUSY", "the other connection could not write inside the transaction");
    // Once it is committed, the other connection writes as usual.
    other.prepare("insert into daily_salts (day, salt) values ('2026-01-01', 'other')").run();
    const days = (await db.selectFrom("dailySalts").select("day").orderBy("day").execute()).map((r) => r.day);
    assert.deepEqual(days, ["2026-01-01", "2026-01-02"]);
  });
});
