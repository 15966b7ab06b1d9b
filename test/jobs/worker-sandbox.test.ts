import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { FIXTURES, QUIRE_BIN } from "../helpers/paths.ts";
import { seededRandom } from "../helpers/seeded-random.ts";
import { soak } from "../helpers/soak.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { until } from "../helpers/poll.ts";
import { startWorker } from "../helpers/worker-process.ts";

/** Processes whose command line or mounts name `tag` (a data folder, or one worker's office folder). */
function processesNaming(tag: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(QUIRE_BIN)) continue; // a worker itself
      if (cmdline.includes(tag) || readFileSync(`/proc/${entry}/mountinfo`, "utf8").includes(tag)) {
        found.push(`${entry} ${cmdline.replace(/\0/g, " ").slice(0, 100)}`);
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** True while the worker's LibreOffice has a document: its slot's input is only there during a conversion. */
function converting(tmpDir: string, officePrefix: string): boolean {
  try {
    return readdirSync(tmpDir)
      .filter((n) => n.startsWith(officePrefix))
      .some((n) => readdirSync(join(tmpDir, n, "io", "slot-0")).includes("document"));
  } catch {
    return false;
  }
}

/** Kills, in lanes of workers that start and die side by side; each lane cycles through the three moments. */
const KILLS = soak(20, 9);
const LANES = soak(5, 3);
const PHASES = ["starting", "idle", "converting"] as const;

describe("a killed worker leaves no converter behind", { timeout: 300_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.close());

  test(`${KILLS} SIGKILLs at seeded random moments (starting, idle, converting)`, async (t) => {
    const random = seededRandom(119);
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const tmpDir = join(server.dataDir, "tmp");
    const env = {
      QUIRE_DATA_DIR: server.dataDir,
      QUIRE_OFFICE_SLOTS: "1",
      QUIRE_WORKER_CONCURRENCY: "1",
      QUIRE_JOB_LEASE_SECONDS: "2",
      QUIRE_JOB_MAX_ATTEMPTS: "2",
    };
    const host = hostname().replace(/[^A-Za-z0-9.]/g, "_");
    // Seeded up front, so that the lanes' interleaving cannot change which moment each kill aims at.
    const plan = Array.from({ length: KILLS }, (_, n) => ({ phase: PHASES[Math.floor(n / LANES) % 3]!, wait: random() }));
    const killedWhile: string[] = [];

    const round = async (n: number): Promise<void> => {
      const { phase, wait } = plan[n]!;
      if (phase === "converting") unwrap(await client.upload(join(FIXTURES, "word97-30pages-annex.doc")));
      const w = startWorker(env);
      const officePrefix = `office-${host}-${w.child.pid!}-`;
      const started = () => w.out().includes("worker started");
      if (phase === "starting") {
        // Somewhere in LibreOffice's start: from its first process on.
        await until(() => processesNaming(officePrefix).length > 0 || w.child.exitCode !== null, 60_000, "LibreOffice to start");
        // LibreOffice starts in well under a second: early enough to land before the worker is up.
        await sleep(wait * 300);
      } else {
        await until(() => started() || w.child.exitCode !== null, 120_000, "the worker to start");
        if (phase === "converting") {
          // Another lane's worker may hold the job for a while: past this, the kill lands while idle.
          await until(() => converting(tmpDir, officePrefix), 20_000, "a conversion").catch(() => undefined);
          await sleep(wait * 500);
        } else {
          await sleep(wait * 1000);
        }
      }
      assert.equal(w.child.exitCode, null, `worker ${n} ended on its own:\n${w.out()}`);
      const at = processesNaming(officePrefix).length;
      killedWhile.push(!started() ? "starting" : converting(tmpDir, officePrefix) ? "converting" : "idle");
      w.child.kill("SIGKILL");
      await w.exited;
      // The kernel tears the sandboxes down as the worker goes: a moment, not the next worker's sweep.
      await until(() => processesNaming(officePrefix).length === 0, 20_000, "the converters to go").catch(() => undefined);
      assert.deepEqual(processesNaming(officePrefix), [], `kill ${n} (${killedWhile.at(-1)}, ${at} converter processes then)`);
    };

    // Workers start and die side by side, as they would on a host.
    await Promise.all(Array.from({ length: LANES }, async (_, lane) => {
      for (let n = lane; n < plan.length; n += LANES) await round(n);
    }));
    assert.deepEqual(processesNaming(server.dataDir), [], "nothing of any worker is left");
    const count = (p: string) => killedWhile.filter((k) => k === p).length;
    t.diagnostic(`killed while starting ${count("starting")}, idle ${count("idle")}, converting ${count("converting")}`);
    assert.equal(killedWhile.length, KILLS);
    for (const p of ["starting", "idle", "converting"]) assert.ok(count(p) > 0, `some kills while ${p}: ${killedWhile.join(" ")}`);
  });
});
