import assert from "node:assert/strict";
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { sample } from "../helpers/metrics-text.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { soak } from "../helpers/soak.ts";
import { spawnQuire, type QuireProcess } from "../helpers/quire-process.ts";
import { startS3Server, type TestS3Server } from "../helpers/s3-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Two API processes and two worker processes on one PostgreSQL database and one S3 server, as a
 * scaled-out installation runs. 60 uploads (200 in a soak run: files and URLs) spread over both APIs; one worker is
 * killed with SIGKILL midway. Every document must reach its final state exactly once: no job run
 * to completion twice (counted from every worker's "job finished" log lines, the killed one's
 * included), none lost.
 */

// Enough for the kill to land midway with both workers busy; the 200 in a soak run.
const UPLOADS = soak(200, 60);
const URL_EVERY = 5; // one upload in five is a URL upload
const PDFS = ["pdf-quartz-firefox-1page.pdf", "pdf-acrobat9-fonts-not-embedded.pdf", "pdf-rotated-page.pdf"];

const skip = await postgresUnavailable();
let pg: { store: Store; url: string; drop(): Promise<void> } | undefined;
let s3: TestS3Server;
let dir: string;
let web: Server;
let webBase: string;
const procs: QuireProcess[] = [];

before(async () => {
  if (skip) return;
  pg = await DIALECTS.find((d) => d.name === "postgres")!.open();
  s3 = await startS3Server("quire-cluster");
  dir = await mkdtemp(join(tmpdir(), "quire-cluster-"));
  const files = new Map<string, Buffer>();
  for (const f of PDFS) files.set(`/${f}`, await readFile(join(FIXTURES, f)));
  web = createServer((req, res) => {
    const body = files.get(new URL(req.url ?? "/", "http://x").pathname);
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/pdf" }).end(body);
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  webBase = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
});

after(async () => {
  await Promise.all(procs.map((p) => p.kill("SIGKILL")));
  web?.closeAllConnections();
  await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
  await s3?.close();
  await pg?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function env(name: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...s3.env,
    QUIRE_DATA_DIR: join(dir, name),
    QUIRE_DATABASE_URL: pg!.url,
    QUIRE_BLOB_URL: `s3://${s3.bucket}/cluster`,
    QUIRE_PORT: "0",
    QUIRE_DEMO_ACCOUNT: "0",
    QUIRE_FETCH_ALLOW_PRIVATE: "1",
    QUIRE_LOG_LEVEL: "info",
    ...extra,
  };
}

const worker = (name: string) =>
  spawnQuire(
    ["worker"],
    env(name, {
      // a killed worker's job is taken over 3 s after its last heartbeat
      QUIRE_JOB_LEASE_SECONDS: "3",
      QUIRE_WORKER_CONCURRENCY: "2",
      QUIRE_OFFICE_SLOTS: "1",
      QUIRE_METRICS_PORT: "0",
    }),
  );

test("2 APIs + 2 workers on PostgreSQL and S3: every upload completes exactly once, one worker SIGKILLed midway", { skip, timeout: 235_000 }, async () => {
  const store = pg!.store;
  const account = await createAccount(store, "cluster");
  const apis = [spawnQuire(["serve", "--no-worker"], env("api-1")), spawnQuire(["serve", "--no-worker"], env("api-2"))];
  const workers = [worker("worker-1"), worker("worker-2")];
  procs.push(...apis, ...workers);
  const urls = await Promise.all(apis.map(async (a) => (await a.waitFor(/Quire listening on (http:\/\/\S+?) /))[1]!));
  const metricsPorts = await Promise.all(workers.map(async (w) => Number((await w.waitFor(/"port":(\d+),"msg":"metrics and health checks listening"/))[1])));
  const clients = urls.map((baseUrl) => new QuireClient({ baseUrl, apiKey: account.apiKey, apiSecret: account.apiSecret }));
  const started = Date.now();

  // Uploads 8 at a time, alternating between the APIs.
  const ids: string[] = [];
  let next = 0;
  const uploader = async () => {
    for (let i = next++; i < UPLOADS; i = next++) {
      const client = clients[i % 2]!;
      const pdf = PDFS[i % PDFS.length]!;
      const answer =
        i % URL_EVERY === 0
          ? await client.call("document.url_upload", { slurpUrl: `${webBase}/${pdf}`, title: `url ${i}` })
          : await client.upload(join(FIXTURES, pdf), { title: `file ${i}` });
      ids.push((unwrap(answer).document as { documentId: string }).documentId);
    }
  };
  const uploads = Promise.all(Array.from({ length: 8 }, uploader));

  const countActive = async () =>
    Number((await dbOf(store).selectFrom("documents").select((eb) => eb.fn.countAll<number>().as("n")).where("state", "!=", "P").executeTakeFirstOrThrow()).n);
  // Midway: the first worker dies without a chance to hand anything back.
  while ((await countActive()) < UPLOADS / 3) await sleep(100);
  const killedOwnerJobs = workers[0]!.logLines().filter((l) => l.msg === "job finished").length;
  await workers[0]!.kill("SIGKILL");
  await uploads;
  const uploadSeconds = (Date.now() - started) / 1000;

  const deadline = Date.now() + 150_000;
  while ((await countActive()) < UPLOADS && Date.now() < deadline) await sleep(200);
  const seconds = (Date.now() - started) / 1000;
  // A worker publishes a document, then marks its job done and logs it: a moment apart.
  const unfinished = async () =>
    (await dbOf(store).selectFrom("jobs").select("id").where("state", "!=", "done").execute()).length;
  while ((await unfinished()) > 0 && Date.now() < deadline + 30_000) await sleep(200);
  await sleep(500); // the "job finished" line follows the state change

  // What the store says: every document and its one job.
  const docs = await dbOf(store).selectFrom("documents").select(["documentId", "state", "errorMessage"]).execute();
  const jobs = await dbOf(store).selectFrom("jobs").select(["documentId", "state", "attempts"]).execute();
  // What the workers say they ran to completion.
  const completions = new Map<string, number>();
  for (const w of workers) {
    for (const l of w.logLines()) {
      if (l.msg === "job finished" && l.outcome === "success") completions.set(String(l.documentId), (completions.get(String(l.documentId)) ?? 0) + 1);
    }
  }
  // Each job carries the id of the API request that made it into the worker's log lines.
  const requestIds = new Map((await dbOf(store).selectFrom("jobs").select(["documentId", "requestId"]).execute()).map((j) => [j.documentId, j.requestId]));
  const finishedLines = workers.flatMap((w) => w.logLines().filter((l) => l.msg === "job finished"));
  assert.ok(finishedLines.length > 0 && finishedLines.every((l) => typeof l.reqId === "string" && l.reqId === requestIds.get(String(l.documentId))));
  const apiRequestIds = new Set(apis.flatMap((a) => a.logLines().map((l) => l.reqId)));
  assert.ok([...requestIds.values()].every((id) => apiRequestIds.has(id)), "and the API logged the same id");
  const byId = new Map(docs.map((d) => [d.documentId, d]));
  const completed = ids.filter((id) => byId.get(id)?.state === "A").length;
  const duplicates = [...completions.values()].filter((n) => n > 1).length;
  const lost = ids.filter((id) => !["A", "F"].includes(byId.get(id)?.state ?? ""));
  // A worker killed between publishing a document and logging it leaves no line: at most one per slot it had.
  const unlogged = ids.filter((id) => byId.get(id)?.state === "A" && !completions.has(id)).length;
  const takenOver = jobs.filter((j) => j.attempts > 1).length;
  process.stdout.write(
    `cluster: ${ids.length} uploads (${ids.filter((_, i) => i % URL_EVERY === 0).length} by URL) over 2 APIs, 2 workers (one SIGKILLed after ${killedOwnerJobs} jobs): ` +
      `completed ${completed}, duplicates ${duplicates}, lost ${lost.length}; jobs taken over ${takenOver}, completions unlogged by the killed worker ${unlogged}; ` +
      `uploads took ${uploadSeconds.toFixed(1)} s, all final after ${seconds.toFixed(1)} s (${(UPLOADS / seconds).toFixed(1)} documents/s)\n`,
  );

  assert.equal(ids.length, UPLOADS);
  assert.equal(new Set(ids).size, UPLOADS);
  assert.equal(docs.length, UPLOADS, "one record per upload");
  assert.deepEqual(
    docs.filter((d) => d.state !== "A").map((d) => `${d.documentId} ${d.state} ${d.errorMessage}`),
    [],
    "every document active",
  );
  assert.equal(completed, UPLOADS);
  assert.equal(duplicates, 0, "no job ran to completion twice");
  assert.deepEqual(lost, [], "no document lost");
  assert.ok(unlogged <= 2, "only jobs in the killed worker's two slots can lack a log line");
  assert.equal(jobs.length, UPLOADS, "one job per document");
  assert.ok(jobs.every((j) => j.state === "done"));

  // The surviving worker is ready (store, S3, LibreOffice) and its metrics count what it ran.
  const ready = await fetch(`http://127.0.0.1:${metricsPorts[1]}/readyz`);
  assert.deepEqual(await ready.json(), { status: "ok", checks: { store: "ok", blobs: "ok", disk: "ok", converter: "ok" } });
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPorts[1]}/metrics`)).text();
  const successes = [...workers[1]!.logLines()].filter((l) => l.msg === "job finished" && l.outcome === "success").length;
  assert.equal(sample(metrics, "quire_jobs_finished_total", { outcome: "success" }), successes);
  assert.equal(sample(metrics, "quire_conversion_seconds_count", { format: "pdf" }), successes);
  assert.equal(sample(metrics, "quire_queue_depth"), 0);
  assert.equal(sample(metrics, "quire_jobs", { state: "done" }), UPLOADS);

  // Every API answered its share; both stop cleanly on SIGTERM, as does the worker.
  const answered = await Promise.all(
    urls.map(async (u) => {
      const text = await (await fetch(`${u}/metrics`)).text();
      return (sample(text, "quire_api_requests_total", { action: "document.upload", code: "ok" }) ?? 0) + (sample(text, "quire_api_requests_total", { action: "document.url_upload", code: "ok" }) ?? 0);
    }),
  );
  assert.deepEqual(answered, [UPLOADS / 2, UPLOADS / 2], "each API answered its half");
  assert.deepEqual(await Promise.all([...apis, workers[1]!].map((p) => p.kill("SIGTERM"))), [0, 0, 0]);
});
