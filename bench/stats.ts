/**
 * `npm run bench -- stats`: readership statistics (issue 24) on SQLite, three figures in one run.
 *
 * 1. Ingestion: events per second the counter writes (src/web/stats-counter.ts flushing into
 *    SQLite every second, as in production), for a realistic mix: 20,000 readers of 200 documents,
 *    each a view and four beacons; and beacons per second the HTTP route answers (204) under
 *    autocannon while its counter writes them.
 * 2. The reader page's p99 under load with counting on, as a ratio of its p99 with counting off
 *    (QUIRE_STATISTICS=0), measured in the same run (target within 10%): `quire serve --no-worker`
 *    from a fresh build with the flags Quire's start gives node, each in a process of its own, as
 *    production runs it (in this process, under tsx, the two servers shared one heap and the "on"
 *    server's writer thread started under tsx's loader); three processes of each kind, each taking
 *    a round of a second in turn, twenty times over, with one load process for every round. The
 *    figure is the median of each kind's processes' p99s, each over the process's rounds; every
 *    request's pooled p99, and each pair of rounds side by side, are printed beside it
 *    (docs/statistics.md, "An eleventh machine").
 * 3. The app's statistics pages (account, per document; last 30 days and 12 months) for an account
 *    of 1,000 documents and a year of figures generated as per-day rows directly (what about 10
 *    million counted events become): p50 and p99 over sequential requests (target p99 < 50 ms).
 */
import { sql } from "kysely";
import autocannon from "autocannon";
import { fork } from "node:child_process";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { QuireClient, unwrap } from "../src/client/quire-client.ts";
import { createAccount } from "../src/accounts/account-admin.ts";
import { utcDay } from "../src/domain/reader-identity.ts";
import { FLUSH_EVERY_MS } from "../src/domain/statistics.ts";
import type { StatEvent } from "../src/store/statistics.ts";
import { StatsCounter } from "../src/web/stats-counter.ts";
import { givePassword, signInHttp } from "../test/helpers/app-client.ts";
import { accountIdOf, seedDoc } from "../test/helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../test/helpers/test-server.ts";
import { startTestWorker } from "../test/helpers/test-worker.ts";
import { cpuSecondsOfTree, exec, FIXTURES } from "./bench-common.ts";
import { startCompiledServer, type CompiledServer } from "./compiled-server.ts";
import { dbOf } from "../test/helpers/store-db.ts";

const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
/**
 * The reader page's load: browsers of a thousand versions in turn, so views are new readers (as
 * many as one address may count as) and the bot check meets user agents it has not seen.
 */
const READER_AGENTS = Array.from({ length: 1000 }, (_, i) => UA.replace("Chrome/131.0.0.0", `Chrome/131.0.${i}.0`));
const READERS = 20_000;
const DOCS_INGEST = 200;
const ROOT = fileURLToPath(new URL("../", import.meta.url));
/**
 * Server processes of each kind (counting on, off). Several, since one process against another
 * alike differed by itself by up to ±12% in p99 for its whole life when each process waited most
 * of a minute between rounds of 3 s (docs/statistics.md, "An eighth machine", "A tenth machine");
 * with rounds of a second in turn, the processes of a kind agree within a few percent ("An
 * eleventh machine"), so three suffice.
 */
const PROCESSES = 3;
/**
 * Every process takes a round of ROUND_S in turn, CYCLES times over: each waits only for the
 * others' rounds (5 s), where with rounds of 3 s among ten processes it waited 27 s, enough for
 * V8 to shrink its heap and its writer to sleep, and spent about a third more processor time on
 * each request after it (docs/statistics.md, "An eleventh machine").
 */
const CYCLES = 20;
const ROUND_S = 1;
const STATS_DOCS = 1000;
const DAYS = 365;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/**
 * The p99 of every latency (µs) of several rounds, in ms: each round's p99 rests on its slowest
 * 1% (about 70–100 requests in a 1-s round at 2 connections) and moves by ±30% from round to
 * round; the p99 of all of a process's (or a kind's) requests together is the figure the rounds'
 * noise moves least.
 */
function p99Of(rounds: Float64Array[]): number {
  const all = new Float64Array(rounds.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of rounds) {
    all.set(r, at);
    at += r.length;
  }
  all.sort();
  return all[Math.min(all.length - 1, Math.floor(all.length * 0.99))]! / 1000;
}
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

/** Publishes the 14-page PDF with the real pipeline; its reader's path. */
async function publishReader(server: TestServer): Promise<string> {
  const worker = await startTestWorker(server, { startOffice: false });
  const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
  const id = (unwrap(await client.upload(resolve(FIXTURES, "pdf-tcpdf-14pages.pdf"), { title: "Bench" })).document as { documentId: string }).documentId;
  let doc = await server.services.store.documents.getForConversion(id);
  while (doc?.state === "P") {
    await new Promise((r) => setTimeout(r, 100));
    doc = await server.services.store.documents.getForConversion(id);
  }
  await worker.stop();
  if (doc?.state !== "A") throw new Error(`conversion ended in ${doc?.state}`);
  return `/${doc.username}/docs/${doc.name}`;
}

async function ingestion(server: TestServer): Promise<{ eventsPerSecond: number; events: number; eventsPerCpuSecond: number }> {
  const store = server.services.store;
  const owner = { accountId: await accountIdOf(server, server.account.apiKey), username: "tester" };
  const docs: string[] = [];
  for (let i = 0; i < DOCS_INGEST; i++) docs.push((await seedDoc(server, owner, { state: "A", pageCount: 30 })).documentId);
  const now = Date.now();
  const events: StatEvent[] = [];
  for (let r = 0; r < READERS; r++) {
    const documentId = docs[r % DOCS_INGEST]!;
    events.push({ kind: "view", documentId, readerKey: `reader-${r}`, addressKey: `address-${r}`, at: now, embedded: r % 5 === 0, referrerHost: r % 3 ? "" : "news.example", startPage: 1 });
  }
  for (let b = 1; b <= 4; b++) {
    for (let r = 0; r < READERS; r++) {
      events.push({ kind: "beacon", documentId: docs[r % DOCS_INGEST]!, readerKey: `reader-${r}`, at: now + b * 5000, report: { page: b * 3, seconds: 5, turned: b > 1, shares: 0, clicks: 0 } });
    }
  }
  // Events arrive over time as requests come: 5,000 every tenth of a second, the counter flushing each second.
  const counter = new StatsCounter(store);
  counter.start();
  const cpu0 = cpuSecondsOfTree(process.pid);
  const t0 = performance.now();
  for (let i = 0; i < events.length; i += 5000) {
    for (const e of events.slice(i, i + 5000)) counter.push(e);
    await new Promise((r) => setTimeout(r, 100));
  }
  await counter.stop();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSecondsOfTree(process.pid) - cpu0;
  if (counter.written !== events.length) throw new Error(`${counter.written} of ${events.length} events counted`);
  // Processor time of this process and the writer process it started: what the events cost
  // whatever else the machine runs meanwhile.
  return { eventsPerSecond: events.length / seconds, events: events.length, eventsPerCpuSecond: events.length / cpu };
}

/** The load (bench/latency-load.mjs): one process for every round, so that no round pays for its start. */
class LoadProcess {
  private readonly child = fork(fileURLToPath(new URL("./latency-load.mjs", import.meta.url)), [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  private agentsSent = false;

  run(url: string, connections: number, seconds: number): Promise<{ latencies: number[]; failures: number; seconds: number }> {
    const job = { url, connections, durationMs: seconds * 1000, ...(this.agentsSent ? {} : { userAgents: READER_AGENTS }) };
    this.agentsSent = true;
    return new Promise((resolve, reject) => {
      const ended = (code: number | null) => reject(new Error(`the load process exited with ${code}`));
      this.child.once("exit", ended);
      this.child.once("message", (m) => {
        this.child.off("exit", ended);
        resolve(m as { latencies: number[]; failures: number; seconds: number });
      });
      this.child.send(job);
    });
  }

  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

/**
 * The reader page under a closed-loop load of `connections`: every answer's latency in
 * microseconds; p99, requests per second, and the processor time the server's process (every
 * thread of it, and its writer) spent per request, a figure a busy machine's scheduling disturbs
 * far less than a p99.
 */
async function latencyLoad(load: LoadProcess, server: CompiledServer, path: string, connections: number, seconds: number): Promise<{ p99: number; rps: number; n: number; cpuUs: number; latencies: Float64Array }> {
  const url = server.url + path;
  const cpu0 = await server.cpuSeconds();
  const r = await load.run(url, connections, seconds);
  const cpuUs = ((await server.cpuSeconds()) - cpu0) * 1e6;
  if (r.failures > 0) throw new Error(`${url}: ${r.failures} failed requests`);
  const sorted = Float64Array.from(r.latencies).sort();
  return {
    p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]! / 1000, rps: sorted.length / r.seconds, n: sorted.length,
    cpuUs: cpuUs / sorted.length, latencies: sorted,
  };
}

async function load(url: string, opts: { method?: string; body?: string; seconds: number; connections?: number }) {
  const r = await autocannon({
    url, connections: opts.connections ?? 10, duration: opts.seconds, workers: 1, method: opts.method ?? "GET",
    headers: { "user-agent": UA, ...(opts.body ? { "content-type": "text/plain;charset=UTF-8" } : {}) },
    ...(opts.body ? { body: opts.body } : {}),
  });
  if (r.errors > 0 || r.non2xx > 0 || r.timeouts > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts`);
  return { rps: r.requests.average, p99: r.latency.p99 };
}

export async function generateYear(server: TestServer): Promise<{ documentId: string; events: number }> {
  const store = server.services.store;
  // An account of its own: nothing else of this run is in its figures.
  const creds = await createAccount(store, "yearly");
  const owner = { accountId: await accountIdOf(server, creds.apiKey), username: "yearly" };
  let first = "";
  for (let i = 0; i < STATS_DOCS; i++) {
    const d = await seedDoc(server, owner, { state: "A", pageCount: 20, title: `Document ${i}` });
    first ||= d.documentId;
  }
  const start = Date.now() - (DAYS - 1) * 86_400_000;
  const days = Array.from({ length: DAYS }, (_, i) => utcDay(start + i * 86_400_000));
  // One statement per table, from SQLite's own generator: 365 days × 1,000 documents.
  await sql`create temp table bench_days (n integer primary key, day text)`.execute(dbOf(store));
  for (let i = 0; i < days.length; i += 100) {
    await sql`insert into bench_days (n, day) values ${sql.join(days.slice(i, i + 100).map((d, k) => sql`(${i + k}, ${d})`))}`.execute(dbOf(store));
  }
  await sql`insert into stat_days (document_id, day, account_id, impressions, views, embedded_views, reads, read_seconds, downloads, shares, clicks)
    select d.document_id, b.day, d.account_id, 40 + abs(random()) % 20, 20 + abs(random()) % 15, abs(random()) % 5, 10 + abs(random()) % 8,
           600 + abs(random()) % 900, abs(random()) % 3, abs(random()) % 2, abs(random()) % 4
    from documents d cross join bench_days b where d.account_id = ${owner.accountId} and d.title like 'Document %'`.execute(dbOf(store));
  await sql`insert into stat_pages (document_id, day, page, readers)
    select d.document_id, b.day, p.page, 1 + abs(random()) % 6
    from documents d cross join bench_days b cross join (select 1 as page union all select 3 union all select 7 union all select 12 union all select 20) p
    where d.account_id = ${owner.accountId} and d.title like 'Document %'`.execute(dbOf(store));
  await sql`insert into stat_referrers (document_id, day, host, embedded, account_id, views)
    select d.document_id, b.day, r.host, r.embedded, d.account_id, 1 + abs(random()) % 10
    from documents d cross join bench_days b
    cross join (select '' as host, 0 as embedded union all select 'news.example', 0 union all select 'blog.example', 1) r
    where d.account_id = ${owner.accountId} and d.title like 'Document %'`.execute(dbOf(store));
  // What the counter keeps beside them as it writes: the account's days and referrers, the documents' months.
  await sql`insert into stat_account_days select account_id, day, sum(impressions), sum(views), sum(embedded_views), sum(reads), sum(read_seconds),
    sum(downloads), sum(shares), sum(clicks) from stat_days where account_id = ${owner.accountId} group by account_id, day`.execute(dbOf(store));
  await sql`insert into stat_account_referrers select account_id, day, host, embedded, sum(views) from stat_referrers
    where account_id = ${owner.accountId} group by account_id, day, host, embedded`.execute(dbOf(store));
  await sql`insert into stat_months select document_id, substr(day, 1, 7), account_id, sum(impressions), sum(views), sum(reads), sum(read_seconds)
    from stat_days where account_id = ${owner.accountId} group by document_id, substr(day, 1, 7), account_id`.execute(dbOf(store));
  await sql`analyze`.execute(dbOf(store));
  const total = await sql<{ n: number }>`select sum(impressions + views + reads + downloads + shares + clicks) + (select sum(readers) from stat_pages) as n from stat_days where account_id = ${owner.accountId}`.execute(dbOf(store));
  return { documentId: first, events: Number(total.rows[0]!.n) };
}

async function timePage(get: (path: string) => Promise<Response>, path: string, n: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 10; i++) await (await get(path)).arrayBuffer();
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await get(path);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    ms.push(performance.now() - t);
  }
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) };
}

type Reader = { server: CompiledServer; path: string };

/**
 * One figure's rounds: every process takes a round in turn, CYCLES times over, a process of each
 * kind side by side (off then on, on then off in the next cycle, so a drift of the machine's load
 * favours neither); the report.
 */
async function readerRounds(loader: LoadProcess, readers: { on: Reader[]; off: Reader[] }, connections: number): Promise<string> {
  const order: Array<{ kind: "on" | "off"; process: number }> = [];
  for (let p = 0; p < PROCESSES; p++) order.push({ kind: "off", process: p }, { kind: "on", process: p });
  type Round = { p99: number; rps: number; n: number; cpuUs: number; latencies: Float64Array };
  const rounds = { on: readers.on.map(() => [] as Round[]), off: readers.off.map(() => [] as Round[]) };
  const pairs: number[] = [];
  for (let c = 0; c < CYCLES; c++) {
    const cycle = c % 2 === 0 ? order : [...order].reverse();
    const p99s = { on: [] as number[], off: [] as number[] };
    for (const { kind, process: p } of cycle) {
      const r = await latencyLoad(loader, readers[kind][p]!.server, readers[kind][p]!.path, connections, ROUND_S);
      rounds[kind][p]!.push(r);
      p99s[kind][p] = r.p99;
    }
    for (let p = 0; p < PROCESSES; p++) pairs.push(p99s.on[p]! / p99s.off[p]!);
  }
  const processes = (kind: "on" | "off") => rounds[kind].map((rs) => ({
    p99: p99Of(rs.map((r) => r.latencies)), rps: median(rs.map((r) => r.rps)), cpuUs: median(rs.map((r) => r.cpuUs)),
  }));
  const on = processes("on");
  const off = processes("off");
  const pooledOn = p99Of(rounds.on.flat().map((r) => r.latencies));
  const pooledOff = p99Of(rounds.off.flat().map((r) => r.latencies));
  const processOn = median(on.map((x) => x.p99));
  const processOff = median(off.map((x) => x.p99));
  const requests = median([...rounds.on.flat(), ...rounds.off.flat()].map((r) => r.n));
  return (
    `reader page p99 (quire serve, ${PROCESSES} processes of each kind), ${connections} connections, ${CYCLES} cycles of a ${ROUND_S}-s round per process (${requests} requests a round):\n` +
    on.map((x, p) => `  processes ${p + 1}: p99 on ${x.p99.toFixed(2)} ms, off ${off[p]!.p99.toFixed(2)} ms; ${Math.round(x.rps)} vs ${Math.round(off[p]!.rps)} req/s; ` +
      `processor ${Math.round(x.cpuUs)} vs ${Math.round(off[p]!.cpuUs)} µs a request (medians of rounds)\n`).join("") +
    `  rounds side by side (a process of each kind, one after the other): p99 ratio median ${median(pairs).toFixed(2)}, quartiles ${quantile(pairs, 0.25).toFixed(2)}–${quantile(pairs, 0.75).toFixed(2)}\n` +
    `  processor time a request: on ${Math.round(median(on.map((x) => x.cpuUs)))} µs, off ${Math.round(median(off.map((x) => x.cpuUs)))} µs\n` +
    `  pooled (every request of a kind): p99 on ${pooledOn.toFixed(2)} ms, off ${pooledOff.toFixed(2)} ms, ratio ${(pooledOn / pooledOff).toFixed(2)}\n` +
    `  median of the processes' p99s (each over its own rounds): on ${processOn.toFixed(2)} ms, off ${processOff.toFixed(2)} ms, ratio ${(processOn / processOff).toFixed(2)} (target ≤ 1.10)\n`
  );
}

export async function benchStats(): Promise<void> {
  // Written every FLUSH_EVERY_MS as `quire serve` writes them (the test servers' default is 50 ms).
  const on = await startTestServer({ QUIRE_STATISTICS: "1", QUIRE_PASSWORD_HASH_COST: "12" }, { statsFlushMs: FLUSH_EVERY_MS });
  const off = await startTestServer({ QUIRE_STATISTICS: "0" }, { statsFlushMs: FLUSH_EVERY_MS });
  // The other processes' databases, made alike: a server of each kind more for each process.
  const more = { on: [] as TestServer[], off: [] as TestServer[] };
  for (let i = 1; i < PROCESSES; i++) {
    more.on.push(await startTestServer({ QUIRE_STATISTICS: "1" }, { statsFlushMs: FLUSH_EVERY_MS }));
    more.off.push(await startTestServer({ QUIRE_STATISTICS: "0" }, { statsFlushMs: FLUSH_EVERY_MS }));
  }
  const dist = join(ROOT, ".tmp", `bench-stats-dist-${process.pid}`);
  const served: CompiledServer[] = [];
  try {
    // 1. Ingestion through the counter (the beacon route under load comes after 2).
    // On a server of its own: the reader page's two servers stay alike (the ingestion's writes
    // would leave the "on" server's database, and its write-ahead log, larger than the other's).
    const ingestServer = await startTestServer({ QUIRE_STATISTICS: "1" });
    const ingest = await ingestion(ingestServer).finally(() => ingestServer.close());
    process.stdout.write(`ingestion (SQLite): ${ingest.events} events (20,000 readers: a view and 4 beacons each) written at ${Math.round(ingest.eventsPerSecond)} events/s (target ≥ 5,000); ${Math.round(ingest.eventsPerCpuSecond)} events per second of processor time\n`);

    // Each database then served by `quire serve` from a fresh build (the servers here stay idle).
    await exec(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--out-dir", dist]);
    const serve = async (server: TestServer, counting: boolean) => {
      const path = await publishReader(server);
      const compiled = await startCompiledServer(dist, server.dataDir, { QUIRE_STATISTICS: counting ? "1" : "0" });
      served.push(compiled);
      return { server: compiled, path };
    };
    const readers = { on: [await serve(on, true)], off: [await serve(off, false)] };
    for (const s of more.on) readers.on.push(await serve(s, true));
    for (const s of more.off) readers.off.push(await serve(s, false));
    const { server: servedOn, path: readerOn } = readers.on[0]!;
    // 2. The reader page with counting on and off, rounds in turn (readerRounds), each round's
    //    p99 measured to the microsecond: with 2 connections (a steady load: below saturation
    //    where the page costs 160 µs or more; where it costs 80, the server is busy 96% of the time
    //    and its p99 is one request's wait plus its own: docs/statistics.md, "An eighth machine"),
    //    then with 10 (as fast as the machine goes, where p99 is mostly queueing). Every request of the "on" rounds
    //    is a view counted through the whole path (bot check, keys, buffer, the process writing
    //    the batches); the user agents of READER_AGENTS make each a reader of its own to look up
    //    when written.
    const loader = new LoadProcess();
    try {
      for (const r of [...readers.on, ...readers.off]) await latencyLoad(loader, r.server, r.path, 10, 2);
      for (const connections of [2, 10]) process.stdout.write(await readerRounds(loader, readers, connections));
    } finally {
      loader.close();
    }

    // The beacon route under load, after the rounds (its writes would have made the "on" server's
    // database unlike the other's).
    // A view first, so that the beacons count on top of it (every beacon of the load is then a write).
    await (await fetch(servedOn.url + readerOn, { headers: { "user-agent": UA } })).arrayBuffer();
    const beaconBody = JSON.stringify({ p: 3, s: 1, t: true, sh: 0, c: 0 });
    await load(`${servedOn.url}${readerOn}/beacon`, { method: "POST", body: beaconBody, seconds: 2 });
    const beacons = await load(`${servedOn.url}${readerOn}/beacon`, { method: "POST", body: beaconBody, seconds: 3 });
    process.stdout.write(`beacon route (SQLite, counting on): ${Math.round(beacons.rps)} beacons/s answered 204, p99 ${beacons.p99} ms\n`);

    // 3. The statistics pages over a year of 1,000 documents.
    const year = await generateYear(on);
    await givePassword(on, "yearly", "bench password");
    const session = await signInHttp(on.url, "yearly", "bench password");
    const get = (path: string) => session.get(path);
    process.stdout.write(`statistics pages: 1,000 documents, ${DAYS} days, ${year.events.toLocaleString("en")} counted events as per-day rows\n`);
    for (const path of [
      "/app/statistics", "/app/statistics?range=12m", `/app/statistics/${year.documentId}`, `/app/statistics/${year.documentId}?range=12m`,
    ]) {
      const t = await timePage(get, path, 200);
      process.stdout.write(`  ${path.replace(year.documentId, "<documentId>")}: p50 ${t.p50.toFixed(1)} ms, p99 ${t.p99.toFixed(1)} ms (target p99 < 50 ms)\n`);
    }
  } finally {
    for (const s of served) await s.kill();
    await rm(dist, { recursive: true, force: true });
    await on.close();
    await off.close();
    for (const s of [...more.on, ...more.off]) await s.close();
  }
}
