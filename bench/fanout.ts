/**
 * `npm run bench -- fanout` (issue 16): time to A of a long document split into page-range jobs.
 *  1. The 352-page book (shared fixtures) with one `quire worker` process of one rendering lane
 *     (one job at a time, one pdftoppm, one tesseract) against two such processes: the ratio says
 *     how the time to A falls when a second worker takes ranges of the same document.
 *  2. A 20-page document (the book's first 20 pages) on one such process, with the defaults (it is
 *     under QUIRE_FANOUT_MIN_PAGES, so one job) against splitting turned off: the fan-out's cost
 *     where it does not split. For reference, the same document forced into ranges of 5.
 * Documents are written straight into the store once the workers are up (LibreOffice's start is
 * not measured), over one SQLite file and one blob folder; rounds alternate so a change in the
 * machine's load falls on both sides alike.
 */
import { createReadStream, readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { blobKeys } from "../src/blobs/blob-keys.ts";
import { createAccount } from "../src/accounts/account-admin.ts";
import { loadConfig } from "../src/config.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../src/domain/document.ts";
import { CONVERT_DOCUMENT } from "../src/domain/job-kinds.ts";
import { openServices, type Services } from "../src/services.ts";
import { spawnQuire } from "../test/helpers/quire-process.ts";
import { exec, FIXTURES } from "./bench-common.ts";
import { dbOf } from "../test/helpers/store-db.ts";

const BOOK = join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf");
/** One rendering lane per process: one job, one pdftoppm, one tesseract at a time. */
const ONE_LANE = { QUIRE_WORKER_CONCURRENCY: "1", QUIRE_WORKER_NEWCOMER_SLOTS: "0", QUIRE_RENDER_PROCESSES: "1", QUIRE_OCR_CONCURRENCY: "1", QUIRE_OFFICE_SLOTS: "1" };
const SMALL_ROUNDS = 3;

interface Cluster {
  services: Services;
  accountId: number;
  /** Seconds from the document's job being queued to the document being A. */
  timeToActive(pdf: string, title: string): Promise<number>;
  /** Worker processes seen holding a range of the last document. */
  rangeHolders: Set<string>;
  /** Each job of the last document, per worker process: where its time to A went. */
  timeline(): string;
  close(): Promise<void>;
}

/** `workers` `quire worker` processes with `env`, up and waiting for jobs. */
async function cluster(workers: number, env: Record<string, string>, pinned = false): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), "quire-bench-fanout-"));
  const base = { QUIRE_DATA_DIR: dir, QUIRE_LOG_LEVEL: "info", ...ONE_LANE, ...env };
  const services = await openServices(loadConfig(base));
  const procs = Array.from({ length: workers }, (_, i) => spawnQuire(["worker"], { ...base, QUIRE_TMP_DIR: join(dir, `tmp-${i}`) }, pinned ? { cpus: String(i % availableParallelism()) } : {}));
  const close = async () => {
    await Promise.all(procs.map((p) => p.kill("SIGTERM")));
    await services.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(procs.map((p) => p.waitFor(/"msg":"worker started"/, 180_000)));
    const account = await createAccount(services.store, "bench");
    const accountId = (await services.store.accounts.getKeyOwnerForSigning(account.apiKey))!.accountId;
    const rangeHolders = new Set<string>();
    let lastQueued = 0;
    let lastDoc = "";
    return {
      services,
      accountId,
      rangeHolders,
      async timeToActive(pdf, title) {
        rangeHolders.clear();
        const now = Date.now();
        const blobId = newBlobId();
        await services.blobs.put(blobKeys.original(blobId), createReadStream(pdf));
        const doc = buildNewDocument(
          newDocumentIds(now),
          { accountId, username: "bench", origin: "apiupload", orgDocType: "pdf", orgDocName: `${title}.pdf`, defaultTitle: title, slurpUrl: "", originalSize: 1, blobId },
          {
            name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "en",
            access: "public", explicit: false, category: "000000", type: "001000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
          },
          now,
        );
        const started = performance.now();
        lastQueued = Date.now();
        lastDoc = doc.documentId;
        await services.store.documents.insertWithJob(doc, CONVERT_DOCUMENT);
        for (;;) {
          const d = await services.store.documents.getForConversion(doc.documentId);
          if (d?.state === "A") return (performance.now() - started) / 1000;
          if (d?.state !== "P") throw new Error(`${title} ended in ${d?.state}: ${d?.errorMessage}`);
          const held = await dbOf(services.store).selectFrom("jobs").select("leaseOwner").where("kind", "=", "convert-pages").where("state", "=", "running").execute();
          for (const j of held) if (j.leaseOwner) rangeHolders.add(j.leaseOwner);
          await sleep(25);
        }
      },
      timeline() {
        return procs
          .map((p, i) => {
            const jobs = p.logLines().filter((l) => l.msg === "job finished" && l.documentId === lastDoc);
            const spans = jobs.map((l) => {
              const end = (Number(l.time) - lastQueued) / 1000;
              const took = Number(l.seconds);
              return `${String(l.kind).replace("convert-", "")} ${(end - took).toFixed(1)}-${end.toFixed(1)}`;
            });
            return `      worker ${i + 1}: ${spans.join(", ")}`;
          })
          .join("\n");
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The book's first 20 pages, as their own PDF (poppler's tools on a fixture of ours: no sandbox needed). */
async function twentyPages(dir: string): Promise<string> {
  await exec("pdfseparate", ["-f", "1", "-l", "20", BOOK, join(dir, "p-%d.pdf")]);
  const parts = (await readdir(dir)).filter((n) => /^p-\d+\.pdf$/.test(n)).sort((a, b) => Number(a.slice(2, -4)) - Number(b.slice(2, -4)));
  const out = join(dir, "twenty.pdf");
  await exec("pdfunite", [...parts.map((n) => join(dir, n)), out]);
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const out = (s: string) => process.stdout.write(s);

/** Busy and total CPU time of the whole machine so far, in clock ticks (/proc/stat's first line). */
function machineTicks(): { busy: number; total: number } {
  const ticks = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  // idle and iowait are the 4th and 5th figures.
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

/** Seconds to A of the book on `workers` processes, and how many cores the machine kept busy meanwhile. */
async function bookTime(workers: number, pinned: boolean): Promise<{ seconds: number; cores: number }> {
  const c = await cluster(workers, {}, pinned);
  try {
    const before = machineTicks();
    const seconds = await c.timeToActive(BOOK, "freeculture");
    const after = machineTicks();
    const cores = ((after.busy - before.busy) / (after.total - before.total)) * availableParallelism();
    out(`    ${workers} worker process${workers === 1 ? "" : "es"}: ${seconds.toFixed(1)} s to A, cores busy ${cores.toFixed(2)} of ${availableParallelism()} on average; its jobs, seconds after queueing:\n${c.timeline()}\n`);
    return { seconds, cores };
  } finally {
    await c.close();
  }
}

export async function benchFanout(): Promise<void> {
  const cores = availableParallelism();
  out(`fanout: ${cores} cores; default split: more than 48 pages, ranges of 24 (QUIRE_FANOUT_*)\n`);
  out(`  352-page book, each worker process on a core of its own (taskset), as on machines of one core each:\n`);
  const onePinned = await bookTime(1, true);
  const twoPinned = await bookTime(2, true);
  out(`  ratio 1/2, a core each: ${(onePinned.seconds / twoPinned.seconds).toFixed(2)} (target >= 1.7)\n`);
  out(`  352-page book, the worker processes sharing the machine's ${cores} cores:\n`);
  const one = await bookTime(1, false);
  const two = await bookTime(2, false);
  // One lane overlaps rendering with encoding, so it keeps more than one core busy; on a machine
  // of `cores` cores, two lanes can then gain at most cores / (cores one lane keeps busy).
  out(`  ratio 1/2, sharing: ${(one.seconds / two.seconds).toFixed(2)} (bound by the CPU: ${cores} / ${one.cores.toFixed(2)} = ${(cores / one.cores).toFixed(2)})\n`);

  const scratch = await mkdtemp(join(tmpdir(), "quire-bench-twenty-"));
  try {
    const twenty = await twentyPages(scratch);
    const configs: Array<[string, Record<string, string>]> = [
      ["defaults (one job: under the threshold)", {}],
      ["splitting off", { QUIRE_FANOUT_MIN_PAGES: "1000000" }],
      ["forced into ranges of 5 (reference)", { QUIRE_FANOUT_MIN_PAGES: "1", QUIRE_FANOUT_RANGE_PAGES: "5" }],
    ];
    const clusters = [];
    for (const [, env] of configs) clusters.push(await cluster(1, env));
    try {
      const times: number[][] = configs.map(() => []);
      for (let r = 0; r < SMALL_ROUNDS; r++) {
        for (let i = 0; i < clusters.length; i++) times[i]!.push(await clusters[i]!.timeToActive(twenty, `twenty-${r}`));
      }
      const [withDefaults, off, forced] = times.map(median) as [number, number, number];
      out(`  20-page document, 1 worker process, median of ${SMALL_ROUNDS}:\n`);
      configs.forEach(([label], i) => out(`    ${label}: ${median(times[i]!).toFixed(2)} s (${times[i]!.map((t) => t.toFixed(2)).join(", ")})\n`));
      out(`  fan-out overhead on 20 pages (defaults / splitting off): ${(withDefaults / off).toFixed(2)}; forced split / off: ${(forced / off).toFixed(2)}\n`);
    } finally {
      for (const c of clusters) await c.close();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
