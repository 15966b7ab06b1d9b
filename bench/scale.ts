/**
 * `npm run bench -- scale`: conversion throughput of 1 worker process against 2, on the same set of
 * PDFs, over one PostgreSQL database (SQLite when PostgreSQL is not reachable) and one blob folder.
 * Each worker process runs one conversion at a time, so the process count is the only variable.
 * Jobs are inserted once the workers are up, so start-up (LibreOffice) is not measured; rounds
 * alternate 1, 2, 1, 2 so a change in the machine's load falls on both sides alike.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { blobKeys } from "../src/blobs/blob-keys.ts";
import { createAccount } from "../src/accounts/account-admin.ts";
import { loadConfig } from "../src/config.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../src/domain/document.ts";
import { openServices, type Services } from "../src/services.ts";
import { spawnQuire } from "../test/helpers/quire-process.ts";
import { FIXTURES } from "./bench-common.ts";
import { dbOf } from "../test/helpers/store-db.ts";

const PDFS = ["pdf-quartz-firefox-1page.pdf", "pdf-acrobat9-fonts-not-embedded.pdf", "pdf-rotated-page.pdf", "pdf-owner-password-only-nocopy.pdf", "pdf-tcpdf-14pages.pdf"];
const DOCUMENTS = 30;
const ROUNDS = [1, 2, 1, 2];
const PG_ADMIN = process.env.QUIRE_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function adminQuery(sql: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(sql);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function seed(services: Services, accountId: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const file = PDFS[i % PDFS.length]!;
    const now = Date.now() + i;
    const blobId = newBlobId();
    await services.blobs.put(blobKeys.original(blobId), createReadStream(join(FIXTURES, file)));
    const doc = buildNewDocument(
      newDocumentIds(now),
      { accountId, username: "bench", origin: "apiupload", orgDocType: "pdf", orgDocName: file, defaultTitle: file, slurpUrl: "", originalSize: 1000, blobId },
      {
        name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "en",
        access: "public", explicit: false, category: "007000", type: "009000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
      },
      now,
    );
    await services.store.documents.insertWithJob(doc, "convert-document");
  }
}

async function pending(services: Services): Promise<number> {
  const r = await dbOf(services.store).selectFrom("documents").select((eb) => eb.fn.countAll<number>().as("n")).where("state", "=", "P").executeTakeFirstOrThrow();
  return Number(r.n);
}

/** One round: `workers` processes up, then DOCUMENTS jobs at once; documents per second until the last leaves P. */
async function round(workers: number): Promise<{ docsPerSecond: number; pages: number }> {
  const dir = await mkdtemp(join(tmpdir(), "quire-bench-scale-"));
  const dbName = `quire_bench_${randomBytes(5).toString("hex")}`;
  const usePg = await adminQuery(`create database ${dbName}`);
  const databaseUrl = usePg ? PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`) : join(dir, "quire.db");
  const env = { QUIRE_DATA_DIR: dir, QUIRE_DATABASE_URL: databaseUrl, QUIRE_LOG_LEVEL: "info", QUIRE_WORKER_CONCURRENCY: "1", QUIRE_OFFICE_SLOTS: "1" };
  const services = await openServices(loadConfig(env));
  const procs = Array.from({ length: workers }, (_, i) => spawnQuire(["worker"], { ...env, QUIRE_TMP_DIR: join(dir, `tmp-${i}`) }));
  try {
    await Promise.all(procs.map((p) => p.waitFor(/"msg":"worker started"/, 120_000)));
    const account = await createAccount(services.store, "bench");
    const owner = await services.store.accounts.getKeyOwnerForSigning(account.apiKey);
    const started = performance.now();
    await seed(services, owner!.accountId, DOCUMENTS);
    while ((await pending(services)) > 0) await sleep(50);
    const seconds = (performance.now() - started) / 1000;
    const docs = await dbOf(services.store).selectFrom("documents").select(["state", "pageCount"]).execute();
    const failed = docs.filter((d) => d.state !== "A");
    if (failed.length > 0) throw new Error(`${failed.length} documents did not convert`);
    return { docsPerSecond: DOCUMENTS / seconds, pages: docs.reduce((n, d) => n + d.pageCount, 0) };
  } finally {
    await Promise.all(procs.map((p) => p.kill("SIGTERM")));
    await services.close();
    if (usePg) await adminQuery(`drop database if exists ${dbName} with (force)`);
    await rm(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchScale(): Promise<void> {
  const results = new Map<number, number[]>([[1, []], [2, []]]);
  let pages = 0;
  for (const n of ROUNDS) {
    const r = await round(n);
    pages = r.pages;
    results.get(n)!.push(r.docsPerSecond);
    process.stdout.write(`  round: ${n} worker process${n > 1 ? "es" : ""}: ${r.docsPerSecond.toFixed(2)} documents/s\n`);
  }
  const one = median(results.get(1)!);
  const two = median(results.get(2)!);
  process.stdout.write(
    `scale: ${DOCUMENTS} PDFs (${pages} pages) per round, one conversion per process, ${availableParallelism()} cores\n` +
      `  1 worker process:  ${one.toFixed(2)} documents/s (baseline)\n` +
      `  2 worker processes: ${two.toFixed(2)} documents/s\n` +
      `  ratio 2/1: ${(two / one).toFixed(2)}\n`,
  );
}
