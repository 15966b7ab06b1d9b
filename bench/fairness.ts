/**
 * `npm run bench -- fairness` (issue 11 item 3): the time to A of one account's one-page PDF
 * while another account has 20 URL uploads of a server sending a byte every 20 s and 10 zip-bomb
 * .odt files queued, against its time on an idle worker, in the same run. Production settings
 * where they matter: 2 slots and the newcomer slot (QUIRE_WORKER_NEWCOMER_SLOTS=1, the default),
 * the fetch rate floor (16 KiB/s over 10 s), the 120 s office timeout. For comparison the same load
 * with QUIRE_JOBS_PER_ACCOUNT=1 instead, and with neither (the hostile account fills both slots). Then the cost of a claim with 20,000 queued jobs
 * against 100: the claim walks the accounts with work, not the queue, so only the number of
 * accounts with queued jobs makes it dearer.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CONVERT_DOCUMENT, type JobKind } from "../src/domain/job-kinds.ts";
import { openStore, type Store } from "../src/store/open-store.ts";
import { jobsOf, queueHostileLoad, startFairnessRig, untilSettled, uploadVictimPdf, type FairnessRig } from "../test/helpers/fairness-load.ts";
import { dbOf } from "../test/helpers/store-db.ts";

const SLOTS = 2;
const RUNS = 3;
const TRICKLE_EVERY_MS = 20_000;
const FETCH = { minBytesPerSecond: 16_384, rateWindowMs: 10_000, idleTimeoutMs: 30_000, totalTimeoutMs: 120_000, connectTimeoutMs: 10_000 };

async function rig(perAccount: number, newcomerSlots = 0): Promise<FairnessRig> {
  return startFairnessRig({ concurrency: SLOTS, maxRunningPerAccount: perAccount, newcomerSlots, officeTimeoutMs: 120_000, maxAttempts: 4, fetch: FETCH }, TRICKLE_EVERY_MS);
}

/** Median seconds to A of RUNS victim PDFs, one after the other. */
async function victimSeconds(r: FairnessRig): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const id = await uploadVictimPdf(r, `victim ${i}`);
    const settled = await untilSettled(r, id, 600_000);
    if (settled.state !== "A") throw new Error(`the victim's PDF ended in ${settled.state}: ${settled.errorMessage}`);
    times.push(settled.ms / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function underLoad(perAccount: number, newcomerSlots = 0): Promise<{ seconds: number; hostileLeft: number }> {
  const r = await rig(perAccount, newcomerSlots);
  try {
    await queueHostileLoad(r, 20, 10);
    await r.startWorker();
    while ((await jobsOf(r, r.hostile.accountId)).running < Math.min(perAccount, SLOTS)) await sleep(50);
    const seconds = await victimSeconds(r);
    const left = await jobsOf(r, r.hostile.accountId);
    return { seconds, hostileLeft: left.queued + left.running };
  } finally {
    await r.close();
  }
}

/** Mean ms of a claim (and its finish) with `queued` jobs spread over `accounts` accounts. */
async function claimMs(queued: number, accounts: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "quire-bench-claim-"));
  let store: Store | undefined;
  try {
    store = await openStore(join(dir, "quire.db"));
    const rows = Array.from({ length: queued }, (_, i) => ({
      kind: CONVERT_DOCUMENT as JobKind, documentId: `doc-${i}`, accountId: 1 + (i % accounts), state: "queued", attempts: 0, runAt: i,
      leaseUntil: null, leaseOwner: null, lastError: "", createdAt: i, updatedAt: i,
    }));
    for (let i = 0; i < rows.length; i += 500) await dbOf(store).insertInto("jobs").values(rows.slice(i, i + 500)).execute();
    const rules = { kinds: [CONVERT_DOCUMENT], perAccount: 1 };
    const claims = 50;
    const started = performance.now();
    for (let i = 0; i < claims; i++) {
      const job = await store.jobs.claimNext("bench", queued + 1, 60_000, rules);
      if (!job) throw new Error("nothing to claim");
      await store.jobs.finish(job.id, "bench", queued + 1, { state: "done" });
    }
    return (performance.now() - started) / claims;
  } finally {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchFairness(): Promise<void> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`fairness: ${SLOTS} slots; the hostile account queues 20 URL uploads (a byte every ${TRICKLE_EVERY_MS / 1000} s) and 10 zip-bomb .odt files`);

  const idle = await rig(1);
  let idleSeconds: number;
  try {
    await idle.startWorker();
    idleSeconds = await victimSeconds(idle);
  } finally {
    await idle.close();
  }
  out(`  victim's 1-page PDF to A, idle worker:                ${idleSeconds.toFixed(2)} s (median of ${RUNS})`);

  const newcomer = await underLoad(SLOTS, 1);
  out(`  victim's 1-page PDF to A, under load, defaults:       ${newcomer.seconds.toFixed(2)} s  ratio ${(newcomer.seconds / idleSeconds).toFixed(2)} x idle  (2 slots for anyone + 1 newcomer slot; hostile jobs still queued or running: ${newcomer.hostileLeft})`);

  const capped = await underLoad(1);
  out(`  the same with QUIRE_JOBS_PER_ACCOUNT=1, no newcomer:  ${capped.seconds.toFixed(2)} s  ratio ${(capped.seconds / idleSeconds).toFixed(2)} x idle  (hostile jobs still queued or running: ${capped.hostileLeft})`);

  const uncapped = await underLoad(SLOTS);
  out(`  for comparison, neither (fair order only):            ${uncapped.seconds.toFixed(2)} s  ratio ${(uncapped.seconds / idleSeconds).toFixed(2)} x idle`);

  await claimMs(100, 10); // warms up the statement cache and the file system
  const few = await claimMs(100, 10);
  const many = await claimMs(20_000, 10);
  const spread = await claimMs(20_000, 1000);
  out(`  one claim and finish (SQLite), 100 queued jobs of 10 accounts: ${few.toFixed(2)} ms; 20,000 of 10 accounts: ${many.toFixed(2)} ms  ratio ${(many / few).toFixed(2)}`);
  out(`  (the claim walks the accounts with work: 20,000 queued jobs of 1,000 accounts: ${spread.toFixed(2)} ms)`);
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) await benchFairness();
