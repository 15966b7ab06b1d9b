import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { jobsOf, queueHostileLoad, startFairnessRig, untilSettled, uploadVictimPdf, type FairnessRig } from "../helpers/fairness-load.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Issue 11 item 3: one account cannot delay another's documents. The hostile account queues 20
 * URL uploads of a server that trickles a byte every 500 ms and 10 zip-bomb office files; a
 * second account's one-page PDF must still be converted while that queue is far from drained.
 * The worker has `quire worker`'s defaults: every regular slot open to any account, and one
 * newcomer slot, which the hostile account never gets. (`npm run bench -- fairness` prints the
 * time it takes.)
 */

const SLOTS = 2;

describe("fair claims across accounts", { timeout: 240_000 }, () => {
  let rig: FairnessRig;
  before(async () => {
    rig = await startFairnessRig({
      concurrency: SLOTS,
      maxRunningPerAccount: SLOTS,
      newcomerSlots: 1,
      officeTimeoutMs: 20_000,
      maxAttempts: 2,
      // each trickling fetch is cut by the rate floor after one window, for good (not retried)
      fetch: { minBytesPerSecond: 1000, rateWindowMs: 3000, idleTimeoutMs: 10_000, totalTimeoutMs: 60_000 },
    });
  });
  after(async () => rig?.close());

  test("a second account's PDF reaches A while the first account's queue is still full, through the newcomer slot", async () => {
    const hostileIds = await queueHostileLoad(rig, 20, 10);
    assert.equal(hostileIds.length, 30);
    await rig.startWorker();
    let maxHostileRunning = 0;
    let victim: string | undefined = undefined;
    // The hostile queue as it was when the victim's job was first seen claimed: fairness is when
    // it is claimed; how long its conversion then takes depends on the machine's load alone.
    let leftAtClaim: { queued: number; running: number } | undefined;
    const watch = async () => {
      const hostile = await jobsOf(rig, rig.hostile.accountId);
      maxHostileRunning = Math.max(maxHostileRunning, hostile.running);
      if (victim !== undefined && leftAtClaim === undefined) {
        const job = await dbOf(rig.server.services.store).selectFrom("jobs").select("state").where("documentId", "=", victim).executeTakeFirst();
        if (job?.state !== "queued") leftAtClaim = hostile;
      }
    };
    // every regular slot is busy with the hostile account before the victim arrives
    for (let i = 0; (await jobsOf(rig, rig.hostile.accountId)).running < SLOTS; i++) {
      assert.ok(i < 2400, "a hostile job starts");
      await sleep(25);
    }
    victim = await uploadVictimPdf(rig);
    const settled = await untilSettled(rig, victim, 180_000, watch);
    assert.equal(settled.state, "A", settled.errorMessage);

    const left = leftAtClaim!;
    assert.ok(left.queued + left.running >= 20, `most of the hostile queue is still there when the victim is claimed (${left.queued} queued, ${left.running} running)`);
    for (let i = 0; i < 40; i++) {
      await watch();
      await sleep(25);
    }
    assert.equal(maxHostileRunning, SLOTS, "the hostile account had every regular slot, and never the newcomer slot");
  });
});
