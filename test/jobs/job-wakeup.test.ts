import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import { CONVERT_DOCUMENT } from "../../src/domain/job-kinds.ts";
import { openServices } from "../../src/services.ts";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { startWorkerRole } from "../../src/worker-role.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { TEST_TIMINGS } from "../helpers/test-worker.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";
import { sandboxSettings } from "../../src/convert/sandbox.ts";

/**
 * Idle workers hear of a queued job at once, on both dialects, from another connection as from
 * another process. No timing here is tighter than DEADLINE_MS: the workers under test poll every
 * minute, so a job found within it was found through its wake-up.
 */
const DEADLINE_MS = 10_000;
const POLL_MS = 60_000;
const pgSkip = await postgresUnavailable();
const log = pino({ level: "silent" });
/** The application_name the PostgreSQL listener's session goes by. */
const LISTENER = "quire job wake-ups";

/** Hears wake-ups; `next` resolves at the first one after it is asked, or fails after DEADLINE_MS. */
function counter() {
  let waiters: Array<() => void> = [];
  return {
    hit: () => {
      for (const w of waiters) w();
      waiters = [];
    },
    next(what: string): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no wake-up within ${DEADLINE_MS} ms: ${what}`)), DEADLINE_MS);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/** Handles of the kinds a notifier may hold: a watcher, a socket, a reconnect timer. */
function openHandles(): Record<string, number> {
  const counts: Record<string, number> = { FSEventWrap: 0, TCPSocketWrap: 0, Timeout: 0 };
  for (const kind of process.getActiveResourcesInfo()) if (kind in counts) counts[kind]!++;
  return counts;
}

/**
 * Checks, just after a close, that no more handles of each kind are open than in `baseline`: timers
 * at once (a close clears them), sockets within a second (one goes a little after its `end`).
 */
async function backTo(baseline: Record<string, number>): Promise<void> {
  assert.ok(openHandles().Timeout! <= baseline.Timeout!, "a timer outlived the close");
  for (let i = 0; i < 50; i++) {
    const now = openHandles();
    if (Object.keys(baseline).every((k) => now[k]! <= baseline[k]!)) return;
    await sleep(20);
  }
  assert.deepEqual(openHandles(), baseline, "the notifier left handles open after its close");
}

for (const dialect of DIALECTS) {
  describe(`job wake-ups on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    /** Another connection to the same database, as the API's process would have. */
    let other: Store;
    let url: string;
    let drop: () => Promise<void>;
    let accountId: number;
    before(async () => {
      ({ store, url, drop } = await dialect.open());
      other = await openStore(url);
      accountId = (await seedAccount(store, "wakeup", "k".repeat(32), "s".repeat(32), 1));
    });
    after(async () => {
      await other?.close();
      await drop?.();
    });

    /** The open handles once both stores' pools hold the idle connection (and its timer) they keep using. */
    async function settledHandles(): Promise<Record<string, number>> {
      await store.ping();
      await other.ping();
      return openHandles();
    }

    /** Sessions of the notifier's listener in this test's database (PostgreSQL). */
    async function listeners(): Promise<number> {
      const rows = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = ${LISTENER}`.execute(dbOf(store));
      return rows.rows[0]!.n;
    }

    async function jobState(documentId: string): Promise<string | undefined> {
      return (await store.jobs.getForDocument(documentId))[0]?.state;
    }

    test("a job queued by another connection wakes the watcher", async () => {
      const heard = counter();
      const unwatch = await store.watchQueuedJobs(heard.hit, log);
      try {
        const now = Date.now();
        const doc = buildNewDocument(
          newDocumentIds(now),
          { accountId, username: "wakeup", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
          { name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [] },
          now,
        );
        const woken = heard.next("after an upload's record and job");
        await other.documents.insertWithJob(doc, CONVERT_DOCUMENT);
        await woken;
        const again = heard.next("after a job enqueued on its own");
        await other.jobs.enqueue(CONVERT_DOCUMENT, "no-such-document", accountId, Date.now());
        await again;
      } finally {
        await unwatch();
      }
    });

    test("an idle worker polling once a minute claims a newly queued job at once", { timeout: 4 * DEADLINE_MS }, async () => {
      // The worker role as `quire worker` starts it, in a store of its own (as another process would).
      const dataDir = await mkdtemp(join(tmpdir(), "quire-wakeup-"));
      const config = { ...loadConfig({ QUIRE_DATA_DIR: dataDir, QUIRE_LOG_LEVEL: "silent", QUIRE_DATABASE_URL: url }), workerConcurrency: 2, newcomerSlots: 1, metricsPort: undefined };
      const services = await openServices(config);
      // A short grace: its timer outlives even a quick stop, and would hold this file's process.
      const timings = { ...TEST_TIMINGS, pollMs: POLL_MS, stopGraceMs: 1_000 };
      const role = await startWorkerRole({ config, services, log, officeDir: join(dataDir, "office"), sandbox: sandboxSettings(config, "office"), timings, startOffice: false, sweeps: false });
      assert.ok(role);
      try {
        // A job for a document that is gone: its run is a quick "skipped", and the job ends done.
        const claimedPromptly = async (documentId: string): Promise<void> => {
          const queuedAt = Date.now();
          await other.jobs.enqueue(CONVERT_DOCUMENT, documentId, accountId, queuedAt);
          for (let state = await jobState(documentId); state !== "done"; state = await jobState(documentId)) {
            if (Date.now() - queuedAt > DEADLINE_MS) assert.fail(`job of ${documentId} still ${state} ${DEADLINE_MS} ms after it was queued`);
            await sleep(20);
          }
        };
        await sleep(500); // every slot has made its first claim and waits
        await claimedPromptly("gone-1");
        // The slot that ran it has looked once more and found nothing: all of them wait again.
        await sleep(500);
        await claimedPromptly("gone-2");
      } finally {
        await role.worker.stop();
        await role.office.close();
        await services.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    test("closing the watch leaves no handle open", async () => {
      const baseline = await settledHandles();
      const unwatch = await store.watchQueuedJobs(() => {}, log);
      try {
        if (dialect.name === "postgres") assert.equal(await listeners(), 1, "the listener's session is open");
        else assert.equal(openHandles().FSEventWrap, baseline.FSEventWrap! + 1, "the directory is watched");
      } finally {
        await unwatch();
      }
      await unwatch(); // a second close is harmless
      await backTo(baseline);
      if (dialect.name === "postgres") {
        // The server ends the session once it reads the client's goodbye.
        for (let i = 0; i < 50 && (await listeners()) > 0; i++) await sleep(20);
        assert.equal(await listeners(), 0, "the listener's session is gone");
      }
    });

    if (dialect.name === "postgres") {
      test("the listener reconnects after its connection is cut, and closes cleanly while waiting to", async () => {
        const cut = () => sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = ${LISTENER}`.execute(dbOf(store));
        const baseline = await settledHandles();
        const heard = counter();
        const unwatch = await store.watchQueuedJobs(heard.hit, log);
        try {
          // Back after its first delay: it wakes the workers once in case, then hears new jobs again.
          const reconnected = heard.next("after the reconnect");
          await cut();
          await reconnected;
          const woken = heard.next("after a job queued once reconnected");
          await other.jobs.enqueue(CONVERT_DOCUMENT, "after-reconnect", accountId, Date.now());
          await woken;
          // Cut again and closed before its reconnect timer fires: neither the timer nor a socket stays.
          await cut();
          await sleep(200);
        } finally {
          await unwatch();
        }
        await backTo(baseline);
      });
    }
  });
}
