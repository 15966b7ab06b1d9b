/**
 * `npm run bench -- search [documents] [pagesPerDocument] [sqlite|postgres]`: full-text search (decisions §11) on
 * SQLite (FTS5) and PostgreSQL (text search), over one account of generated documents (default
 * 10,000 × 100 pages, about a million pages; smaller sizes measure the same thing sooner).
 *
 * 1. Query latency, p50 and p99, of `store.search.search` (first 10 documents with their hits and
 *    snippets) for a mix of queries: rare, middling and common words, two words, phrases.
 * 2. What the index adds to publishing one 50-page document: `markActive` with the page texts
 *    against `markActive` with none, as a share of the real conversion of that document
 *    (the worker's handler on a generated 50-page text PDF), measured in the same run; for that
 *    PDF's text, and for 50 pages of the generated text, whose pairs of words are nearly all new.
 */
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { blobKeys } from "../src/blobs/blob-keys.ts";
import { createAccount } from "../src/accounts/account-admin.ts";
import { loadConfig } from "../src/config.ts";
import { OfficeConverter } from "../src/convert/office-to-pdf.ts";
import { parseSearchQuery } from "../src/domain/search-query.ts";
import type { Store } from "../src/store/open-store.ts";
import { openServices } from "../src/services.ts";
import type { Job } from "../src/store/jobs.ts";
import { createDatabase, databaseUrl, dropDatabase, postgresUnavailable } from "../test/helpers/dialects.ts";
import { writeDenseTextPdf } from "../test/helpers/dense-text-pdf.ts";
import { newStoreDoc } from "../test/helpers/search-docs.ts";
import { TEST_TIMINGS } from "../test/helpers/test-worker.ts";
import { jobRegistry } from "../src/worker-role.ts";
import { createReadStream } from "node:fs";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { dbOf } from "../test/helpers/store-db.ts";
import { DEFAULT_SANDBOX, sandboxSettings } from "../src/convert/sandbox.ts";

const DOCS = Number(process.argv[3] ?? 10_000);
const PAGES = Number(process.argv[4] ?? 100);
const WORDS_PER_PAGE = 250;
const VOCABULARY = 30_000;
const QUERIES = 300;
/** `sqlite` or `postgres` to measure one; both by default. */
const ONLY = process.argv[5];
/**
 * A folder where the generated index is kept (SQLite: its file; PostgreSQL: the database
 * quire_bench_<documents>x<pages>, not dropped) and found again by the next run of the same size,
 * which then measures without indexing a million pages again.
 */
const KEEP = process.env.QUIRE_BENCH_SEARCH_KEEP;

/** A seeded generator, so both dialects index the same text. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
}

const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe", "gu", "hi", "jo", "bre", "cla", "dro", "str", "qui"];
function makeVocabulary(): string[] {
  const r = rng(7);
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    let w = "";
    for (let n = 2 + Math.floor(r() * 3); n > 0; n--) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

/** Zipf-distributed word ranks (s = 1), by inverting the harmonic CDF approximately. */
function zipf(r: () => number): number {
  return Math.min(VOCABULARY - 1, Math.floor(Math.exp(r() * Math.log(VOCABULARY)) - 1));
}

function pageText(vocab: string[], r: () => number): string {
  const words = [];
  for (let i = 0; i < WORDS_PER_PAGE; i++) words.push(vocab[zipf(r)]);
  return words.join(" ");
}

async function fill(store: Store, accountId: number, vocab: string[]): Promise<string[]> {
  const r = rng(42);
  const samples: string[] = [];
  const started = Date.now();
  for (let d = 0; d < DOCS; d++) {
    const pages = Array.from({ length: PAGES }, () => pageText(vocab, r));
    if (d % Math.max(1, Math.floor(DOCS / 50)) === 0) samples.push(pages[Math.floor(r() * PAGES)]!);
    const doc = newStoreDoc(accountId, "bench", { title: `${vocab[zipf(r)]} ${vocab[zipf(r)]} ${vocab[zipf(r)]}`, state: "P" });
    await store.documents.insertWithJob(doc, "convert-document");
    await store.documents.markActive(doc.documentId, { pageCount: PAGES, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined, pageTexts: pages }, Date.now());
    if ((d + 1) % 1000 === 0) process.stdout.write(`  ${d + 1} documents indexed (${Math.round((Date.now() - started) / 1000)} s)\n`);
  }
  return samples;
}

function queries(vocab: string[], samples: string[]): Array<{ kind: string; q: string }> {
  const r = rng(99);
  const out = [];
  for (let i = 0; i < QUERIES; i++) {
    const k = i % 10;
    const word = (lo: number, hi: number) => vocab[lo + Math.floor(r() * (hi - lo))]!;
    if (k < 4) out.push({ kind: "rare word", q: word(3000, VOCABULARY) });
    else if (k < 6) out.push({ kind: "middling word", q: word(300, 3000) });
    else if (k < 7) out.push({ kind: "common word", q: word(20, 300) });
    else if (k < 9) out.push({ kind: "two words", q: `${word(300, VOCABULARY)} ${word(300, VOCABULARY)}` });
    else {
      const words = samples[Math.floor(r() * samples.length)]!.split(" ");
      const at = Math.floor(r() * (words.length - 2));
      out.push({ kind: "phrase", q: `"${words[at]} ${words[at + 1]}"` });
    }
  }
  return out;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measureQueries(store: Store, accountId: number, list: Array<{ kind: string; q: string }>): Promise<void> {
  const search = (q: string) =>
    store.search.search({ query: parseSearchQuery(q), scope: { kind: "account", accountId, states: ["A"] }, startIndex: 0, pageSize: 10, maxHits: 5 });
  for (const { q } of list.slice(0, 20)) await search(q); // warm the caches
  const byKind = new Map<string, number[]>();
  const all: number[] = [];
  for (const { kind, q } of list) {
    const t = performance.now();
    await search(q);
    const ms = performance.now() - t;
    all.push(ms);
    byKind.set(kind, [...(byKind.get(kind) ?? []), ms]);
  }
  all.sort((a, b) => a - b);
  process.stdout.write(`  queries: p50 ${pct(all, 50).toFixed(1)} ms, p99 ${pct(all, 99).toFixed(1)} ms over ${all.length} (target p99 < 50 ms)\n`);
  for (const [kind, ms] of byKind) {
    ms.sort((a, b) => a - b);
    process.stdout.write(`    ${kind.padEnd(14)} p50 ${pct(ms, 50).toFixed(1).padStart(7)} ms  p99 ${pct(ms, 99).toFixed(1).padStart(7)} ms\n`);
  }
}

/**
 * markActive with and without the page texts (medians of 5): what the index adds to publishing,
 * for the converted document's own text (a few words over and over) and for 50 pages of the
 * generated text (a word list as wide as real prose: nearly every pair of words a new one).
 */
async function measurePublish(store: Store, accountId: number, texts: Array<{ label: string; pages: string[] }>, conversionMs: number): Promise<void> {
  const publish = async (pageTexts: string[] | undefined) => {
    const doc = newStoreDoc(accountId, "bench", { title: "Publishing cost", state: "P" });
    await store.documents.insertWithJob(doc, "convert-document");
    const t = performance.now();
    await store.documents.markActive(doc.documentId, {
      pageCount: 50, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined, pageTexts,
    }, Date.now());
    return performance.now() - t;
  };
  for (const { label, pages } of texts) {
    const withText: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < 5; i++) {
      without.push(await publish(undefined));
      withText.push(await publish(pages));
    }
    const added = median(withText) - median(without);
    const chars = pages.reduce((n, p) => n + p.length, 0);
    process.stdout.write(
      `  publishing a 50-page document, ${label} (${chars} characters): index adds ${added.toFixed(1)} ms to a ${conversionMs.toFixed(0)} ms conversion = ${((100 * added) / conversionMs).toFixed(2)}% (target < 10%)\n`,
    );
  }
}

/** The real conversion of a generated 50-page text PDF, timed; answers its time and page texts. */
async function convertOnce(): Promise<{ ms: number; pageTexts: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), "quire-bench-search-"));
  try {
    // One job for the whole document: the figure is the index's share of one conversion, not of a split one.
    const config = loadConfig({ QUIRE_DATA_DIR: dir, QUIRE_LOG_LEVEL: "silent", QUIRE_FANOUT_MIN_PAGES: "100000" });
    const services = await openServices(config);
    const creds = await createAccount(services.store, "bench");
    const accountId = (await services.store.accounts.getKeyOwnerForSigning(creds.apiKey))!.accountId;
    const pdf = join(dir, "fifty.pdf");
    await writeDenseTextPdf(pdf, { pages: 50, size: 300 });
    const doc = newStoreDoc(accountId, "bench", { title: "Fifty pages", state: "P" });
    await services.blobs.put(blobKeys.original(doc.blobId), createReadStream(pdf));
    await services.store.documents.insertWithJob(doc, "convert-document");
    await mkdir(config.tmpDir, { recursive: true });
    const office = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, slots: 1, timeoutMs: 20_000, workDir: join(dir, "office") });
    const handler = jobRegistry({ config, services, office, log: pino({ level: "silent" }), timings: TEST_TIMINGS, sandbox: sandboxSettings(config) })["convert-document"];
    const t = performance.now();
    const outcome = await handler.run({ job: { documentId: doc.documentId } as Job, signal: new AbortController().signal });
    const ms = performance.now() - t;
    if (outcome !== "success") throw new Error(`conversion: ${outcome}`);
    const chunks: Buffer[] = [];
    for await (const c of await services.blobs.get(blobKeys.text(doc.blobId))) chunks.push(c as Buffer);
    const text = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Array<{ page: number; text: string }>;
    const pageTexts = Array.from({ length: 50 }, (_, i) => text.find((p) => p.page === i + 1)?.text ?? "");
    await services.close();
    return { ms, pageTexts };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchSearch(): Promise<void> {
  process.stdout.write(`search: ${DOCS} documents × ${PAGES} pages × ${WORDS_PER_PAGE} words in one account\n`);
  const conversion = await convertOnce();
  const vocab = makeVocabulary();
  const list = queries(vocab, [vocab.slice(0, 40).join(" ")]);
  const pgSkip = await postgresUnavailable();
  for (const dialect of ["sqlite", "postgres"] as const) {
    if (ONLY !== undefined && ONLY !== dialect) continue;
    if (dialect === "postgres" && pgSkip) {
      process.stdout.write(`postgres: skipped (${pgSkip})\n`);
      continue;
    }
    const dir = KEEP ? join(KEEP, `${dialect}-${DOCS}x${PAGES}`) : await mkdtemp(join(tmpdir(), "quire-bench-search-"));
    const dbName = KEEP ? `quire_bench_${DOCS}x${PAGES}` : `quire_bench_${randomBytes(4).toString("hex")}`;
    const built = join(dir, "built.json");
    const kept = KEEP ? await readFile(built, "utf8").then((t) => JSON.parse(t) as { accountId: number; samples: string[] }, () => undefined) : undefined;
    // A kept index whose build never finished is started again from nothing, on either dialect.
    if (KEEP && !kept) await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    if (dialect === "postgres" && !kept) {
      if (KEEP) await dropDatabase(dbName);
      await createDatabase(dbName);
    }
    const url = dialect === "postgres" ? databaseUrl(dbName) : join(dir, "quire.db");
    const config = loadConfig({ QUIRE_DATA_DIR: dir, QUIRE_DATABASE_URL: url, QUIRE_LOG_LEVEL: "silent" });
    const services = await openServices(config);
    try {
      process.stdout.write(`${dialect}:\n`);
      let accountId: number;
      let samples: string[];
      if (kept) {
        ({ accountId, samples } = kept);
        process.stdout.write(`  the index kept in ${dir} (QUIRE_BENCH_SEARCH_KEEP)\n`);
      } else {
        const creds = await createAccount(services.store, "bench");
        accountId = (await services.store.accounts.getKeyOwnerForSigning(creds.apiKey))!.accountId;
        const t = Date.now();
        samples = await fill(services.store, accountId, vocab);
        process.stdout.write(`  indexed ${DOCS * PAGES} pages in ${Math.round((Date.now() - t) / 1000)} s\n`);
        if (KEEP) await writeFile(built, JSON.stringify({ accountId, samples }));
      }
      if (dialect === "postgres") {
        // Statistics as autovacuum keeps them on a table that grew over time; a bulk load has none yet.
        await sql`analyze`.execute(dbOf(services.store));
        await sql`checkpoint`.execute(dbOf(services.store));
      }
      // What was written before (the build, or the other database's run) reaches the disk first:
      // its writeback, landing among the queries, made some of them wait 50 to 80 ms on reads.
      await promisify(execFile)("sync");
      await measureQueries(services.store, accountId, queries(vocab, samples.length ? samples : list.map((x) => x.q)));
      const varied = rng(5);
      const generated = Array.from({ length: 50 }, () => pageText(vocab, varied));
      await measurePublish(services.store, accountId, [
        { label: "its own text", pages: conversion.pageTexts },
        { label: "generated text", pages: generated },
      ], conversion.ms);
    } finally {
      await services.close();
      if (!KEEP) {
        if (dialect === "postgres") await dropDatabase(dbName);
        await rm(dir, { recursive: true, force: true });
      }
    }
  }

}
