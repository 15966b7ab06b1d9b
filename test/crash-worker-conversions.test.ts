import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { blobKeys } from "../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../src/client/quire-client.ts";
import { sweepOrphanBlobs } from "../src/jobs/orphan-sweep.ts";
import { blobReferencesRepo } from "../src/store/blob-references.ts";
import { FIXTURES, PROJECT_ROOT } from "./helpers/paths.ts";
import { seededRandom } from "./helpers/seeded-random.ts";
import { exited } from "./helpers/server-process.ts";
import { startTestServer, type TestServer } from "./helpers/test-server.ts";

/**
 * Issue 7, crashes: conversion workers are killed with SIGKILL 20 times at seeded random points
 * (while starting, claiming, rendering pages, storing them). Every document still ends in A once,
 * with each page image stored once, one job per document, and nothing left in temp folders or
 * unowned in the blob store after the clean-up pass.
 */

const KILLS = 20;
const WAVE = 4;
const DOCS = 4;
const SEED = Number(process.env.QUIRE_CRASH_SEED ?? 11);
const FIXTURE = "pdf-tcpdf-14pages.pdf";

function startWorkerChild(server: TestServer) {
  const child = spawn(process.execPath, ["--import", "tsx", "test/helpers/pdf-worker-child.ts"], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      QUIRE_DATA_DIR: server.dataDir,
      QUIRE_LOG_LEVEL: "silent",
      QUIRE_JOB_LEASE_SECONDS: "2",
      QUIRE_WORKER_CONCURRENCY: "1",
      QUIRE_JOB_MAX_ATTEMPTS: "100",
    },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => (d.toString().includes("ready") ? resolve() : undefined));
    child.once("exit", () => reject(new Error("worker child exited before it was ready")));
  });
  return { child, ready };
}

describe("SIGKILL of workers during conversions", { timeout: 170_000 }, () => {
  let server: TestServer;
  let finalWorker: ReturnType<typeof startWorkerChild> | undefined;
  before(async () => {
    server = await startTestServer({ QUIRE_RATE_PER_SECOND: "0" });
  });
  after(async () => {
    finalWorker?.child.kill("SIGKILL");
    await server?.close();
  });

  test(`${KILLS} kills at random points: every document ends in A once, pages stored once, nothing left behind`, async () => {
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const ids: string[] = [];
    for (let i = 0; i < DOCS; i++) {
      ids.push((unwrap(await client.upload(join(FIXTURES, FIXTURE), { title: `doc ${i}` })).document as { documentId: string }).documentId);
    }
    const { store, blobs } = server.services;
    const random = seededRandom(SEED);
    let killedWhileRunning = 0;
    for (let wave = 0; wave < KILLS / WAVE; wave++) {
      const workers = Array.from({ length: WAVE }, () => startWorkerChild(server));
      await Promise.all(
        workers.map(async ({ child, ready }) => {
          await ready;
          await sleep(random() * 1500);
          const running = await store.db.selectFrom("jobs").select("id").where("state", "=", "running").execute();
          if (running.length > 0) killedWhileRunning++;
          child.kill("SIGKILL");
          await exited(child);
        }),
      );
    }
    const leftByKills = (await readdir(server.config.tmpDir).catch(() => [])).filter((n) => n.startsWith("convert-")).length;

    // A last worker that is left alone finishes what the killed ones started.
    finalWorker = startWorkerChild(server);
    await finalWorker.ready;
    for (let i = 0; ; i++) {
      const states = await store.db.selectFrom("documents").select("state").where("documentId", "in", ids).execute();
      if (states.every((s) => s.state !== "P")) break;
      assert.ok(i < 1200, "every document leaves P");
      await sleep(100);
    }
    finalWorker.child.kill("SIGTERM");
    await exited(finalWorker.child);
    finalWorker = undefined;

    for (const id of ids) {
      const doc = (await store.documents.getForConversion(id))!;
      assert.equal(doc.state, "A", `${doc.title}: ${doc.errorMessage}`);
      assert.equal(doc.pageCount, 14);
      const jobs = await store.jobs.getForDocument(id);
      assert.equal(jobs.length, 1, "one job per document, taken over rather than duplicated");
      const keys = await blobs.list(blobKeys.prefix(doc.blobId));
      assert.equal(keys.filter((k) => k.includes("/pages/read/")).length, 14, "each page image stored once");
      assert.equal(keys.filter((k) => k.includes("/pages/thumb/")).length, 14);
    }
    const attempts = (await store.db.selectFrom("jobs").select("attempts").execute()).reduce((n, j) => n + j.attempts, 0);

    const report = await sweepOrphanBlobs({
      blobs, references: blobReferencesRepo(store.db), log: pino({ level: "silent" }), graceMs: 0, scratchDir: server.config.tmpDir, now: () => Date.now() + 1000,
    });
    assert.equal(report.orphanFolders, 0, "a killed conversion writes only under its own document");
    const scratch = (await readdir(server.config.tmpDir)).filter((n) => n.startsWith("convert-"));
    assert.deepEqual(scratch, [], "no conversion folder is left in the temp folder");
    console.log(
      `crash (worker): ${KILLS} SIGKILLs (seed ${SEED}), ${killedWhileRunning} while a conversion ran; ${DOCS} documents all A once, ` +
        `${attempts} attempts in all; the clean-up removed ${report.staleTemp} scratch folders (${leftByKills} left by the kills)`,
    );
  });
});
