import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { Writable } from "node:stream";
import { ConversionError } from "../../src/convert/conversion-error.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import { JobFailure } from "../../src/domain/job-failure.ts";
import { CONVERT_DOCUMENT, CONVERT_PAGES, INDEX_TEXT, PAGE_VARIANTS, PAGE_VARIANTS_REMAKE, PUBLISH_SCHEDULED, REPLACE_FILE, WEBHOOK_DELIVERY } from "../../src/domain/job-kinds.ts";
import { backoffDelay } from "../../src/jobs/backoff.ts";
import { checkRegistry, type JobContext, type JobHandler, type JobRegistry } from "../../src/jobs/job-registry.ts";
import { sweep } from "../../src/jobs/sweeper.ts";
import { startWorker, type WorkerOptions } from "../../src/jobs/worker.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const log = pino({ level: "silent" });
/** The other kind's handler: the registry must be complete, and these tests enqueue no delivery. */
const idle: JobHandler = { run: async () => "skipped", giveUp: async () => {} };
const pgSkip = await postgresUnavailable();

/** A handler (for the one real kind) whose behaviour each test scripts: the runner is what is under test here. */
function scripted(behave: (ctx: JobContext) => Promise<"success" | "failed" | "skipped">) {
  const gaveUp: unknown[] = [];
  const runs: number[] = [];
  const handler: JobHandler = {
    async run(ctx) {
      runs.push(ctx.job.attempts);
      return behave(ctx);
    },
    async giveUp(_job, err) {
      gaveUp.push(err);
    },
  };
  return { handler, gaveUp, runs };
}

for (const dialect of DIALECTS) {
  describe(`worker on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let accountId: number;
    before(async () => {
      ({ store, drop } = await dialect.open());
      accountId = (await seedAccount(store, "worker", "w".repeat(32), "s".repeat(32), 1));
    });
    after(async () => drop?.());

    async function newDocument(owner = accountId): Promise<string> {
      const now = Date.now();
      const doc = buildNewDocument(
        newDocumentIds(now),
        { accountId: owner, username: "worker", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
        { name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [] },
        now,
      );
      await store.documents.insertWithJob(doc, CONVERT_DOCUMENT);
      return doc.documentId;
    }

    function options(handler: JobHandler, over: Partial<WorkerOptions> = {}): WorkerOptions {
      return {
        jobs: store.jobs, registry: { "convert-document": handler, "convert-pages": handler, "webhook-delivery": idle, "index-text": idle, "publish-scheduled": idle, "replace-file": idle, "page-variants": idle, "page-variants-remake": idle }, log, concurrency: 1, maxRunningPerAccount: 1, leaseMs: 2000, heartbeatMs: 200,
        pollMs: 20, jobTimeoutMs: 10_000, maxAttempts: 3, retryBaseMs: 10, retryMaxMs: 20, stopGraceMs: 2000, ...over,
      };
    }

    async function untilJobState(documentId: string, states: string[]): Promise<string> {
      for (let i = 0; i < 500; i++) {
        const [job] = await store.jobs.getForDocument(documentId);
        if (job && states.includes(job.state)) return job.state;
        await sleep(20);
      }
      throw new Error(`job of ${documentId} never reached ${states.join("/")}`);
    }

    test("a transient failure is retried with backoff and then succeeds", async () => {
      const s = scripted(async (ctx) => {
        if (ctx.job.attempts < 3) throw new ConversionError("fetch", "timed out", { transient: true });
        return "success";
      });
      const id = await newDocument();
      const w = startWorker(options(s.handler));
      assert.equal(await untilJobState(id, ["done", "failed"]), "done");
      await w.stop();
      assert.deepEqual(s.runs, [1, 2, 3]);
      assert.equal(s.gaveUp.length, 0);
    });

    test("a full disk (ENOSPC) is waited out without using attempts, then fails saying the disk was full (issue 23 item 0d)", async () => {
      // Full for the first 5 runs, more than maxAttempts (3): the job still succeeds once space is back.
      const full = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      let runs = 0;
      const recovering = scripted(async () => {
        if (++runs <= 5) throw new ConversionError("internal", "could not write", { transient: true, cause: full() });
        return "success";
      });
      const id1 = await newDocument();
      let w = startWorker(options(recovering.handler, { diskWait: { retryMs: 10, forMs: 60_000 } }));
      assert.equal(await untilJobState(id1, ["done", "failed"]), "done");
      await w.stop();
      assert.deepEqual(recovering.runs, [1, 1, 1, 1, 1, 1], "every wait gave its attempt back");
      assert.equal(recovering.gaveUp.length, 0);

      // Full for longer than the wait: the document fails once, saying why.
      const never = scripted(async () => {
        throw full();
      });
      const id2 = await newDocument();
      w = startWorker(options(never.handler, { diskWait: { retryMs: 10, forMs: 200 } }));
      assert.equal(await untilJobState(id2, ["failed"]), "failed");
      await w.stop();
      assert.equal(never.gaveUp.length, 1);
      const reason = never.gaveUp[0] as JobFailure;
      assert.ok(reason instanceof JobFailure);
      assert.equal(reason.code, 9);
      assert.match(reason.message, /^The server's disk was full for 1 minute, so the document could not be converted\.$/);
    });

    test("a permanent failure gives up at once; transient ones give up after maxAttempts", async () => {
      const permanent = scripted(async () => {
        throw new ConversionError("corrupt", "unreadable");
      });
      const id1 = await newDocument();
      let w = startWorker(options(permanent.handler));
      assert.equal(await untilJobState(id1, ["done", "failed"]), "failed");
      await w.stop();
      assert.deepEqual(permanent.runs, [1]);
      assert.equal((permanent.gaveUp[0] as ConversionError).kind, "corrupt");

      const flaky = scripted(async () => {
        throw new Error("converter crashed");
      });
      const id2 = await newDocument();
      w = startWorker(options(flaky.handler));
      assert.equal(await untilJobState(id2, ["done", "failed"]), "failed");
      await w.stop();
      assert.deepEqual(flaky.runs, [1, 2, 3]);
      assert.equal(flaky.gaveUp.length, 1);
    });

    test("a job over its time limit is aborted and ends for good with kind limits", async () => {
      const s = scripted((ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))));
      const id = await newDocument();
      const w = startWorker(options(s.handler, { jobTimeoutMs: 200 }));
      assert.equal(await untilJobState(id, ["done", "failed"]), "failed");
      await w.stop();
      assert.equal((s.gaveUp[0] as ConversionError).kind, "limits");
    });

    test("a job whose worker died is taken over after its lease; the dead worker cannot finish it", async () => {
      const id = await newDocument();
      const dead = (await store.jobs.claimNext("dead-worker", Date.now(), 300, { kinds: [CONVERT_DOCUMENT] }))!;
      assert.equal(dead.documentId, id);
      const s = scripted(async () => "success");
      const w = startWorker(options(s.handler));
      assert.equal(await untilJobState(id, ["done"]), "done");
      await w.stop();
      assert.deepEqual(s.runs, [2]);
      assert.equal(await store.jobs.finish(dead.id, "dead-worker", Date.now(), { state: "failed" }), false);
    });

    test("stop hands a running job back, to be started again at once", async () => {
      let started = false;
      const s = scripted((ctx) => {
        started = true;
        return new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
      });
      const id = await newDocument();
      const w = startWorker(options(s.handler, { stopGraceMs: 100 }));
      while (!started) await sleep(10);
      await w.stop();
      const [job] = await store.jobs.getForDocument(id);
      assert.equal(job!.state, "queued");
      assert.equal(s.gaveUp.length, 0);
      await store.jobs.failAllFor(id, "test over", Date.now());
    });

    test("a registry without a handler for every kind refuses to start", () => {
      const s = scripted(async () => "success");
      assert.throws(() => startWorker(options(s.handler, { registry: {} as JobRegistry })), /no handler for \[convert-document, convert-pages, webhook-delivery, index-text, publish-scheduled, replace-file, page-variants, page-variants-remake\]/);
    });

    test("a giveUp that throws still ends the job, which is not claimed again", async () => {
      const s = scripted(async () => {
        throw new JobFailure("corrupt", "unreadable");
      });
      let gaveUp = 0;
      const handler: JobHandler = {
        run: s.handler.run,
        async giveUp() {
          gaveUp++;
          throw new Error("database down");
        },
      };
      const id = await newDocument();
      const w = startWorker(options(handler, { leaseMs: 300, heartbeatMs: 100 }));
      assert.equal(await untilJobState(id, ["failed"]), "failed");
      await sleep(800); // past the lease: a job left running would be claimed again now
      await w.stop();
      assert.deepEqual(s.runs, [1]);
      assert.equal(gaveUp, 1);
      await store.jobs.failAllFor(id, "test over", Date.now());
    });

    test("a failure's detail goes to the log, its message to giveUp", async () => {
      const lines: string[] = [];
      const sink = new Writable({ write: (chunk: Buffer, _enc, done) => void (lines.push(chunk.toString()), done()) });
      const s = scripted(async () => {
        throw new JobFailure("fetch", "The server name could not be found, or its address is not allowed.", { detail: "resolves to a private network address (10.1.2.3)" });
      });
      const id = await newDocument();
      const w = startWorker(options(s.handler, { log: pino({ level: "warn" }, sink) }));
      assert.equal(await untilJobState(id, ["failed"]), "failed");
      await w.stop();
      assert.ok(lines.some((l) => l.includes("10.1.2.3") && l.includes("job failed for good")), "the log names the refused address");
      assert.doesNotMatch((s.gaveUp[0] as JobFailure).message, /10\.1\.2\.3|private/);
    });

    test("a worker runs no more of one account's jobs at once than its cap; another account's job runs beside them", async () => {
      const other = (await seedAccount(store, "other", "o".repeat(32), "s".repeat(32), 1));
      const now = new Map<number, number>();
      const most = new Map<number, number>();
      let mostInAll = 0;
      let otherStarted!: () => void;
      const otherRuns = new Promise<void>((resolve) => (otherStarted = resolve));
      const s = scripted(async (ctx) => {
        const id = ctx.job.accountId;
        now.set(id, (now.get(id) ?? 0) + 1);
        most.set(id, Math.max(most.get(id) ?? 0, now.get(id)!));
        mostInAll = Math.max(mostInAll, [...now.values()].reduce((a, b) => a + b, 0));
        if (id === other) otherStarted();
        // the busy account's jobs last until the other account's job has started (or long enough to see a third one start)
        else await Promise.race([otherRuns, sleep(10_000)]);
        await sleep(50);
        now.set(id, now.get(id)! - 1);
        return "success";
      });
      const busy = [];
      for (let i = 0; i < 4; i++) busy.push(await newDocument());
      const late = await newDocument(other);
      const w = startWorker(options(s.handler, { concurrency: 3, maxRunningPerAccount: 1 }));
      for (const id of [...busy, late]) assert.equal(await untilJobState(id, ["done", "failed"]), "done");
      await w.stop();
      assert.equal(most.get(accountId), 1, "one of the busy account's jobs at a time");
      assert.equal(most.get(other), 1);
      assert.equal(mostInAll, 2, "the other account's job ran beside them");
      await dbOf(store).updateTable("documents").set({ state: "F" }).where("documentId", "in", [...busy, late]).execute();
    });

    test("with every slot busy with one account, the newcomer slot runs another account's job at once; one account alone never uses it", async () => {
      const other = (await seedAccount(store, "newcomer", "n".repeat(32), "s".repeat(32), 1));
      const running = new Map<number, number>();
      let mostBusy = 0;
      let otherStarted!: () => void;
      const otherRuns = new Promise<void>((r) => (otherStarted = r));
      const s = scripted(async (ctx) => {
        const id = ctx.job.accountId;
        running.set(id, (running.get(id) ?? 0) + 1);
        if (id === other) otherStarted();
        else {
          mostBusy = Math.max(mostBusy, running.get(id)!);
          // the busy account's jobs last until the other account's job has started
          await Promise.race([otherRuns, sleep(10_000)]);
        }
        await sleep(50);
        running.set(id, running.get(id)! - 1);
        return "success";
      });
      const busy = [];
      for (let i = 0; i < 4; i++) busy.push(await newDocument());
      const w = startWorker(options(s.handler, { concurrency: 2, maxRunningPerAccount: 2, newcomerSlots: 1 }));
      await untilJobState(busy[1]!, ["running"]);
      const late = await newDocument(other);
      // Both regular slots hold the busy account's jobs until the late one runs: only the newcomer slot can take it.
      assert.equal(await untilJobState(late, ["done", "failed"]), "done");
      for (const id of busy) assert.equal(await untilJobState(id, ["done", "failed"]), "done");
      await w.stop();
      assert.equal(mostBusy, 2, "one account alone has every regular slot, and never the newcomer slot");
      await dbOf(store).updateTable("documents").set({ state: "F" }).where("documentId", "in", [...busy, late]).execute();
    });

    test("the sweeper re-enqueues a lost job, fails a document whose job ended, and ends overdue ones", async () => {
      // the scripted jobs above leave their documents in P: heal those first, so the counts below are this test's own
      await sweep({ store, log, jobKind: CONVERT_DOCUMENT, maxProcessingMs: 3_600_000 });
      const lost = await newDocument();
      await dbOf(store).deleteFrom("jobs").where("documentId", "=", lost).execute();
      const ended = await newDocument();
      await store.jobs.failAllFor(ended, "crashed", Date.now());
      const report = await sweep({ store, log, jobKind: CONVERT_DOCUMENT, maxProcessingMs: 3_600_000 });
      assert.equal(report.requeued, 1);
      assert.equal(report.failed, 1);
      assert.equal((await store.jobs.getForDocument(lost))[0]!.state, "queued");
      const failedDoc = (await store.documents.getForConversion(ended))!;
      assert.equal(failedDoc.state, "F");
      assert.equal(failedDoc.errorCode, 9);

      const overdue = await sweep({ store, log, jobKind: CONVERT_DOCUMENT, maxProcessingMs: 3_600_000, now: () => Date.now() + 7_200_000 });
      assert.ok(overdue.overdue >= 1);
      assert.equal((await store.documents.getForConversion(lost))!.state, "F");
      assert.equal((await store.jobs.getForDocument(lost))[0]!.state, "failed");
    });
  });
}

test("backoff grows and is capped", () => {
  assert.equal(backoffDelay(1, 1000, 60_000, () => 1), 1000);
  assert.equal(backoffDelay(3, 1000, 60_000, () => 1), 4000);
  assert.equal(backoffDelay(20, 1000, 60_000, () => 1), 60_000);
  assert.equal(backoffDelay(3, 1000, 60_000, () => 0), 2000);
});

test("the registry must match the job kinds exactly", () => {
  const h: JobHandler = { run: async () => "success", giveUp: async () => {} };
  checkRegistry({ [CONVERT_DOCUMENT]: h, [CONVERT_PAGES]: h, [WEBHOOK_DELIVERY]: h, [INDEX_TEXT]: h, [PUBLISH_SCHEDULED]: h, [REPLACE_FILE]: h, [PAGE_VARIANTS]: h, [PAGE_VARIANTS_REMAKE]: h });
  assert.throws(() => checkRegistry({}), /no handler for \[convert-document, convert-pages, webhook-delivery, index-text, publish-scheduled, replace-file, page-variants, page-variants-remake\]/);
  assert.throws(() => checkRegistry({ [CONVERT_DOCUMENT]: h, [CONVERT_PAGES]: h }), /no handler for \[webhook-delivery, index-text, publish-scheduled, replace-file, page-variants, page-variants-remake\]/);
  assert.throws(() => checkRegistry({ [CONVERT_DOCUMENT]: h, [CONVERT_PAGES]: h, [WEBHOOK_DELIVERY]: h, [INDEX_TEXT]: h, [PUBLISH_SCHEDULED]: h, [REPLACE_FILE]: h, [PAGE_VARIANTS]: h, [PAGE_VARIANTS_REMAKE]: h, "ocr-page": h }), /unknown kinds \[ocr-page\]/);
  checkRegistry({ a: h }, ["a"]);
  assert.throws(() => checkRegistry({}, ["a"]), /no handler for \[a\]/);
  assert.throws(() => checkRegistry({ a: h, b: h }, ["a"]), /unknown kinds \[b\]/);
});
