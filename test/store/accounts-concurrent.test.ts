import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Creates of one username at once, each from a store of its own in its own thread (as two
 * processes would; in one thread SQLite's synchronous driver would wait for itself): one gets the
 * account, every other is told the name is taken — an outcome, never a driver's unique violation
 * or lock error — and the account has the one key of the create that won.
 */
const pgSkip = await postgresUnavailable();
const THREADS = 4;
const THREAD = new URL("../helpers/create-account-thread.ts", import.meta.url).href;
/** Registers tsx in the thread when Node cannot load TypeScript by itself, then imports `entry`. */
const BOOT = new URL("../../src/thread-boot.mjs", import.meta.url);

function raceCreates(url: string, username: string): Promise<Array<{ id?: number | null; error?: string }>> {
  const start = new SharedArrayBuffer(4);
  return Promise.all(
    Array.from({ length: THREADS }, (_, i) => {
      const worker = new Worker(BOOT, { workerData: { entry: THREAD, url, username, apiKey: `${username}-${i}`.padEnd(32, "x"), start, threads: THREADS } });
      return new Promise<{ id?: number | null; error?: string }>((resolve, reject) => {
        let answer: { id?: number | null; error?: string } | undefined;
        worker.once("message", (m: { id?: number | null; error?: string }) => (answer = m));
        worker.once("error", reject);
        worker.once("exit", () => (answer ? resolve(answer) : reject(new Error("the thread ended without an answer"))));
      });
    }),
  );
}

for (const dialect of DIALECTS) {
  describe(`concurrent account creates on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    before(async () => {
      ({ store, url, drop } = await dialect.open());
    });
    after(async () => drop?.());

    test("one create of a name wins; the others answer 'taken'", async () => {
      for (let round = 0; round < 2; round++) {
        const username = `racer${round}`;
        const results = await raceCreates(url, username);
        assert.deepEqual(results.filter((r) => r.error !== undefined), [], "no create fails");
        const ids = results.filter((r) => typeof r.id === "number").map((r) => r.id!);
        assert.equal(ids.length, 1, `one create of ${username} wins: ${JSON.stringify(results)}`);
        assert.equal(results.filter((r) => r.id === null).length, THREADS - 1);
        const keys = await dbOf(store).selectFrom("apiKeys").select("apiKey").where("accountId", "=", ids[0]!).execute();
        assert.equal(keys.length, 1, "the account has the winner's key only");
      }
      assert.deepEqual(await store.accounts.createWithKey("racer0", "late".padEnd(32, "x"), "s".repeat(32), Date.now()), { ok: false, reason: "name-taken" }, "a later create is told the same");
    });
  });
}
