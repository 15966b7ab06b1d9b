/**
 * Anonymous abuse of the public pages (issue 23 items 1 and 2), against a real `quire serve
 * --no-worker` process of the compiled build:
 *
 * 1. `/healthz` latency (p50, p99) while 8 anonymous clients, each from its own address
 *    (127.0.0.2…9), send the costliest queries back to back: 64-word `/search` queries over 200
 *    documents holding all 64 words, and 64-word `?q=` reader searches of a document with the most
 *    text a reader holds (1,000,000 characters). Baseline: `/healthz` idle, in the same run.
 *    Also the server's own event-loop delay (prom-client's, from /metrics). Idle and each load
 *    alternate over 3 rounds and the medians are printed: on a machine shared with other work,
 *    one 10 s phase says as much about the neighbours as about the server. Measured with the
 *    default per-address budget, and again with the budget off (threads and the search gate
 *    alone). Target: p99 within ×2 of idle.
 * 2. Server CPU per anonymous request, for each public endpoint (budget off: every request does
 *    its work), from the process's own CPU time (/proc/<pid>/stat).
 * 3. Server memory (RSS) before and after 10,000 cache-busting variants of a reader address
 *    (`?page=007`, `?page=abc1`, pages past the end, `?q=%20%20`…), budget off. Target: flat.
 *
 * `npm run bench -- abuse`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { QuireClient } from "../src/client/quire-client.ts";
import { writeDenseTextPdf } from "../test/helpers/dense-text-pdf.ts";
import { newStoreDoc, publishWithText } from "../test/helpers/search-docs.ts";
import { startTestServer } from "../test/helpers/test-server.ts";
import { startTestWorker } from "../test/helpers/test-worker.ts";
import { readerQueryText } from "../src/web/reader-address.ts";
import { exec } from "./bench-common.ts";
import { mb, publishAndWait, percentile, startCompiledServer, timedGet, type CompiledServer } from "./compiled-server.ts";

const CLIENTS = 8;
const PHASE_MS = 10_000;
const ROUNDS = 3;
const PROBE_EVERY_MS = 20;
const SEARCH_DOCS = 200;
const DENSE_PAGES = 60; // ~48,000 characters a page: past the reader's 1,000,000-character bound
const VARIANTS = 10_000;
const CPU_SAMPLES = 20;
const ROOT = new URL("../", import.meta.url).pathname;

/** 64 distinct words, every one in every page of the search corpus: the costliest search is all of them. */
const WORDS = Array.from({ length: 64 }, (_, i) => `w${(i * 7919 + 1000).toString(36)}q`);
const LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split(" ");
/** 64 words each on every page of the dense document: every page is a hit. */
const READER_QUERY = Array.from({ length: 64 }, (_, i) => LOREM[i % LOREM.length]).join(" ");

const agents = new Map<string, Agent>();
const agentFor = (localAddress: string) => {
  let a = agents.get(localAddress);
  if (!a) agents.set(localAddress, (a = new Agent({ keepAlive: true, maxSockets: 4, localAddress })));
  return a;
};

const get = (url: string, localAddress = "127.0.0.1", headers: Record<string, string> = {}) => timedGet(url, agentFor(localAddress), headers);

interface Phase {
  healthz: number[];
  /** The server's own event-loop delay over the phase (prom-client's, reset at each scrape of /metrics): p99 and max, ms. */
  loopP99: number;
  loopMax: number;
  statuses: Map<number, number>;
}

/** `paths` requested back to back by CLIENTS clients, each from its own address, while /healthz is probed. */
/** The event-loop delay the server measured since the last scrape (nodejs_eventloop_lag_*_seconds), in ms. */
async function loopDelay(server: CompiledServer): Promise<{ p99: number; max: number }> {
  const text = await new Promise<string>((resolve, reject) => {
    request(`${server.url}/metrics`, { agent: agentFor("127.0.0.1") }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c)).on("end", () => resolve(body));
    }).on("error", reject).end();
  });
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)`, "m").exec(text)?.[1]) * 1000;
  return { p99: value("nodejs_eventloop_lag_p99_seconds"), max: value("nodejs_eventloop_lag_max_seconds") };
}

async function phase(server: CompiledServer, paths: string[]): Promise<Phase> {
  const until = performance.now() + PHASE_MS;
  const result: Phase = { healthz: [], statuses: new Map(), loopP99: NaN, loopMax: NaN };
  await loopDelay(server); // resets the server's histogram: what follows is this phase's
  const client = async (i: number) => {
    const address = `127.0.0.${2 + i}`;
    for (let n = 0; performance.now() < until; n++) {
      const r = await get(server.url + paths[(i + n) % paths.length]!, address, { "accept-encoding": "gzip, br" });
      result.statuses.set(r.status, (result.statuses.get(r.status) ?? 0) + 1);
      // A refused client waits as Retry-After tells it (at least a little), as a polite one would; an abusive one gains nothing by not waiting.
      if (r.status === 429 || r.status === 503) await new Promise((res) => setTimeout(res, 100));
    }
  };
  const probe = async () => {
    while (performance.now() < until) {
      const r = await get(`${server.url}/healthz`);
      if (r.status !== 200) throw new Error(`/healthz answered ${r.status}`);
      result.healthz.push(r.ms);
      await new Promise((res) => setTimeout(res, PROBE_EVERY_MS));
    }
  };
  await Promise.all([probe(), ...(paths.length ? Array.from({ length: CLIENTS }, (_, i) => client(i)) : [])]);
  ({ p99: result.loopP99, max: result.loopMax } = await loopDelay(server));
  return result;
}

export async function benchAbuse(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "quire-bench-abuse-"));
  const converter = await startTestServer();
  const dist = join(ROOT, ".tmp", `bench-abuse-dist-${process.pid}`);
  let server: CompiledServer | undefined;
  try {
    const pdf = join(scratch, "dense.pdf");
    await writeDenseTextPdf(pdf, { pages: DENSE_PAGES });
    const worker = await startTestWorker(converter, { startOffice: false, jobTimeoutMs: 900_000 });
    const client = new QuireClient({ baseUrl: converter.url, apiKey: converter.account.apiKey, apiSecret: converter.account.apiSecret });
    const dense = await publishAndWait(converter, client, pdf, "Dense text");
    await worker.stop();
    const store = converter.services.store;
    const accountId = (await store.publicPages.accountByUsername(converter.account.username))!.id;
    const page = Array.from({ length: 40 }, () => WORDS.join(" ")).join(" ");
    for (let d = 0; d < SEARCH_DOCS; d++) {
      await publishWithText(store, newStoreDoc(accountId, converter.account.username, { title: `Corpus ${d}` }), Array.from({ length: 10 }, () => page));
    }
    process.stdout.write(`abuse: ${SEARCH_DOCS} documents of 10 pages holding 64 words each, and a ${DENSE_PAGES}-page document of dense text (${dense})\n`);
    await exec(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--out-dir", dist]);

    const costly = {
      search: `/search?q=${encodeURIComponent(WORDS.join(" "))}`,
      profileSearch: `/${converter.account.username}?q=${encodeURIComponent(WORDS.join(" "))}`,
      // As the reader's canonical address writes it (cut to 200 characters): no redirect on the way.
      readerSearch: `${dense}?${new URLSearchParams({ q: readerQueryText(READER_QUERY) })}`,
    };
    const median = (xs: number[]) => percentile(xs, 50);
    /** One kind of load over its rounds: the median of each round's figures, as a ratio to idle's. */
    const line = (label: string, rounds: Phase[], idle: Phase[]) => {
      const p99 = median(rounds.map((p) => percentile(p.healthz, 99)));
      const idleP99 = median(idle.map((p) => percentile(p.healthz, 99)));
      const loop = median(rounds.map((p) => p.loopP99));
      const idleLoop = median(idle.map((p) => p.loopP99));
      const statuses = new Map<number, number>();
      for (const r of rounds) for (const [c, n] of r.statuses) statuses.set(c, (statuses.get(c) ?? 0) + n);
      const codes = [...statuses].sort().map(([c, n]) => `${n}×${c}`).join(", ");
      return `  ${label.padEnd(20)} /healthz p50 ${median(rounds.map((p) => percentile(p.healthz, 50))).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms = ${(p99 / idleP99).toFixed(2)}× idle; ` +
        `server event-loop delay p99 ${loop.toFixed(1)} ms = ${(loop / idleLoop).toFixed(2)}× idle (max ${Math.max(...rounds.map((p) => p.loopMax)).toFixed(0)} ms)` +
        `${codes ? `; answers ${codes}` : ""}\n`;
    };

    for (const [label, env] of [["default budget", {}], ["budget off", { QUIRE_ANONYMOUS_PER_SECOND: "0" }]] as const) {
      server = await startCompiledServer(dist, converter.dataDir, { QUIRE_ALLOWED_HOSTS: "127.0.0.1", ...env });
      // Warm-up: code compiled, the search thread started, the dense document's text model built.
      await get(server.url + costly.search);
      await get(server.url + costly.readerSearch);
      // Idle and each load in turn, ROUNDS times: the machine's own load changes from minute to minute.
      const kinds = { idle: [] as string[], searches: [costly.search, costly.profileSearch], readers: [costly.readerSearch], both: [costly.search, costly.readerSearch] };
      const results: Record<keyof typeof kinds, Phase[]> = { idle: [], searches: [], readers: [], both: [] };
      for (let r = 0; r < ROUNDS; r++) for (const k of Object.keys(kinds) as Array<keyof typeof kinds>) results[k].push(await phase(server, kinds[k]));
      process.stdout.write(`abuse (${label}): ${CLIENTS} anonymous clients, each its own address, back to back; ${ROUNDS} rounds of ${PHASE_MS / 1000} s each, medians\n`);
      process.stdout.write(line("idle (baseline)", results.idle, results.idle));
      process.stdout.write(line("64-word searches", results.searches, results.idle));
      process.stdout.write(line("64-word reader ?q=", results.readers, results.idle));
      process.stdout.write(line("both", results.both, results.idle));
      if (label === "default budget") {
        await server.kill();
        server = undefined;
        continue;
      }

      // 2. CPU per request, budget off: each request does its work.
      const endpoints: Array<[string, string]> = [
        ["/healthz (reference)", "/healthz"],
        ["/search, one word", `/search?q=${WORDS[0]}`],
        ["/search, 64 words", costly.search],
        ["/<username>?q=, 64 words", costly.profileSearch],
        ["reader, cached", dense],
        ["reader ?q=, one word", `${dense}?q=lorem`],
        ["reader ?q=, 64 words", costly.readerSearch],
        ["search.json?q=, 64 words", `${dense}/search.json?q=${encodeURIComponent(READER_QUERY)}`],
        ["text/1.json (cached)", `${dense}/text/1.json`],
        ["text.json (whole text)", `${dense}/text.json`],
        ["/oembed", `/oembed?url=${encodeURIComponent(server.url + dense)}`],
        ["non-canonical reader (redirect)", `${dense}?page=007`],
      ];
      process.stdout.write(`abuse: server CPU per anonymous request (${CPU_SAMPLES} each, one after another, budget off)\n`);
      for (const [name, path] of endpoints) {
        await get(server.url + path);
        const before = await server.cpuSeconds();
        const t0 = performance.now();
        let status = 0;
        for (let i = 0; i < CPU_SAMPLES; i++) status = (await get(server.url + path, "127.0.0.20", { "accept-encoding": "gzip, br" })).status;
        const cpu = ((await server.cpuSeconds()) - before) / CPU_SAMPLES;
        process.stdout.write(`  ${name.padEnd(36)} ${(cpu * 1000).toFixed(1).padStart(6)} ms CPU, ${((performance.now() - t0) / CPU_SAMPLES).toFixed(1).padStart(6)} ms wall (${status})\n`);
      }

      // 3. Memory after cache-busting variants.
      const rssBefore = await server.rssBytes();
      const forms = [
        (i: number) => `?page=${String(1 + (i % 50)).padStart(3 + (i % 5), "0")}`,
        (i: number) => `?page=abc${i}`,
        (i: number) => `?page=${DENSE_PAGES + 1 + i}`,
        (i: number) => `?q=${"%20".repeat(1 + (i % 40))}`,
        (i: number) => `?page=2&page=${i}`,
        (i: number) => `?consent=yes${i}`,
        (i: number) => `?utm_source=x${i}`,
      ];
      const statuses = new Map<number, number>();
      let sent = 0;
      await Promise.all(Array.from({ length: CLIENTS }, async () => {
        while (sent < VARIANTS) {
          const i = sent++;
          const r = await get(server!.url + dense + forms[i % forms.length]!(i), "127.0.0.30");
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }));
      const rssAfter = await server.rssBytes();
      const codes = [...statuses].sort().map(([c, n]) => `${n}×${c}`).join(", ");
      process.stdout.write(`abuse: ${VARIANTS} cache-busting reader addresses (answers ${codes}): RSS ${mb(rssBefore)} MB before, ${mb(rssAfter)} MB after (${rssAfter >= rssBefore ? "+" : ""}${mb(rssAfter - rssBefore)} MB)\n`);
      await server.kill();
      server = undefined;
    }
  } finally {
    await server?.kill();
    await rm(dist, { recursive: true, force: true });
    await converter.close();
    await rm(scratch, { recursive: true, force: true });
    for (const a of agents.values()) a.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await benchAbuse();
