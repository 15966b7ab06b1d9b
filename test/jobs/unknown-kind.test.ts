import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { CONVERT_DOCUMENT, type JobKind } from "../../src/domain/job-kinds.ts";
import { sweep } from "../../src/jobs/sweeper.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * A queued job of a kind no handler exists for (written by a newer version, or a kind since
 * removed) is never claimed: the sweep fails it once it is older than any conversion may take,
 * with a log line and a count, and leaves it alone before that (a newer worker may still take it).
 */
const pgSkip = await postgresUnavailable();
const MAX_PROCESSING_MS = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`jobs of an unknown kind on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let accountId: number;
    before(async () => {
      ({ store, drop } = await dialect.open());
      accountId = (await seedAccount(store, "unknownkind", "u".repeat(32), "s".repeat(32), 1));
    });
    after(async () => drop?.());

    const job = (kind: string, createdAt: number) => ({
      kind: kind as JobKind, documentId: `doc-${kind}`, accountId, state: "queued", attempts: 0, runAt: createdAt,
      leaseUntil: null, leaseOwner: null, lastError: "", createdAt, updatedAt: createdAt,
    });
    const stateOf = async (kind: string) =>
      dbOf(store).selectFrom("jobs").select(["state", "lastError"]).where("kind", "=", kind as JobKind).executeTakeFirstOrThrow();

    test("is failed by the sweep once older than the time bound, with a log line and a count; a known kind is left", async () => {
      const t0 = 10_000_000;
      await dbOf(store).insertInto("jobs").values([job("publish-later", t0), job("", t0), job(CONVERT_DOCUMENT, t0)]).execute();
      const lines: Array<Record<string, unknown>> = [];
      const log = pino({ level: "info" }, new Writable({ write: (chunk: Buffer, _enc, done) => void (lines.push(JSON.parse(chunk.toString())), done()) }));
      const counted: string[] = [];
      const run = (now: number) => sweep({ store, log, jobKind: CONVERT_DOCUMENT, maxProcessingMs: MAX_PROCESSING_MS, now: () => now, onUnknownKind: (j) => counted.push(j.kind) });

      // Younger than the bound: a newer worker of a rolling upgrade may know the kind.
      assert.equal((await run(t0 + MAX_PROCESSING_MS)).unknownKinds, 0);
      assert.equal((await stateOf("publish-later")).state, "queued");

      const report = await run(t0 + MAX_PROCESSING_MS + 1);
      assert.equal(report.unknownKinds, 2);
      assert.deepEqual(counted.sort(), ["", "publish-later"]);
      assert.deepEqual(await stateOf("publish-later"), { state: "failed", lastError: "unknown job kind: publish-later" });
      assert.equal((await stateOf(CONVERT_DOCUMENT)).state, "queued", "a job of a known kind is never touched");
      const logged = lines.filter((l) => l.msg === "job of an unknown kind failed: no worker handles it");
      assert.deepEqual(logged.map((l) => [l.level, l.kind]).sort(), [[50, ""], [50, "publish-later"]]);

      // Failed once: a second sweep finds nothing more.
      assert.equal((await run(t0 + 2 * MAX_PROCESSING_MS)).unknownKinds, 0);
      assert.equal(counted.length, 2);
    });
  });
}
