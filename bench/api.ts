/**
 * Throughput of the API's request path: signed `svc.documents.list` (20 documents, JSON) against a
 * real Quire server, next to a bare Fastify route answering the same bytes as a constant, measured
 * in the same run on the same machine. The ratio is what counts (the issue wants ≥ 0.5).
 *
 * Quire's app is built as `quire serve` builds it: metrics on, one access line per request at
 * the default level (info), written to /dev/null rather than a terminal through the destination
 * `quire serve` writes stdout with (`accessLogDestination`: 4 KiB gathered before a write, the
 * rest every half second). A second Quire app, the same but for logging, shows what the line costs.
 *
 * `npx tsx bench/api.ts` (or `benchApi()` from bench/run.ts).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Fastify, { type FastifyInstance } from "fastify";
import { startApiRole } from "../src/api-role.ts";
import { buildApp } from "../src/app.ts";
import { createAccount } from "../src/accounts/account-admin.ts";
import { loadConfig } from "../src/config.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../src/domain/document.ts";
import { openSync } from "node:fs";
import { accessLogDestination, httpLoggerOptions } from "../src/ops/access-log.ts";
import { createMetrics } from "../src/ops/metrics.ts";
import { openServices } from "../src/services.ts";

const DOCUMENTS = 20;
const CONNECTIONS = 10;
const WARMUP_S = 2;
/** Short rounds taken in turn, so that a change in the machine's load falls on both sides alike. */
const ROUNDS = 9;
const ROUND_S = 2;

/** md5(secret + names and values in byte order), written here from decisions §3. */
function signedQuery(secret: string, params: Record<string, string>): string {
  const names = Object.keys(params).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const signature = createHash("md5").update(secret + names.map((n) => n + params[n]).join("")).digest("hex");
  return new URLSearchParams({ ...params, signature }).toString();
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}

const AUTOCANNON = createRequire(import.meta.url).resolve("autocannon/autocannon.js");

/**
 * autocannon runs as a process of its own, so that this process's CPU over a round is the server's
 * alone (the three servers are measured in turn): CPU per request is the figure a busy machine
 * disturbs least, where requests per second follow whatever else the cores are doing.
 */
async function round(url: string, seconds: number): Promise<Figures> {
  const before = process.cpuUsage();
  const child = spawn(process.execPath, [AUTOCANNON, "-j", "-c", String(CONNECTIONS), "-d", String(seconds), url], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  await new Promise((resolve) => child.once("close", resolve));
  const cpu = process.cpuUsage(before);
  const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p99: number }; errors: number; non2xx: number; timeouts: number };
  if (r.errors > 0 || r.non2xx > 0 || r.timeouts > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts`);
  return { rps: r.requests.average, p99: r.latency.p99, cpuUs: (cpu.user + cpu.system) / r.requests.total };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

type Figures = { rps: number; p99: number; cpuUs: number };

/** Every URL warmed up, then measured in rounds taken in turn; medians of the rounds and of each one's ratio to the first URL. */
async function measureInTurn(urls: string[]): Promise<Array<Figures & { ratio: number; cpuRatio: number }>> {
  for (const url of urls) await round(url, WARMUP_S);
  const rounds: Figures[][] = urls.map(() => []);
  for (let i = 0; i < ROUNDS; i++) {
    for (const [k, url] of urls.entries()) rounds[k]!.push(await round(url, ROUND_S));
  }
  return rounds.map((ms) => ({
    rps: median(ms.map((m) => m.rps)),
    p99: median(ms.map((m) => m.p99)),
    cpuUs: median(ms.map((m) => m.cpuUs)),
    ratio: median(ms.map((m, i) => m.rps / rounds[0]![i]!.rps)),
    cpuRatio: median(ms.map((m, i) => rounds[0]![i]!.cpuUs / m.cpuUs)),
  }));
}

export async function benchApi(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "quire-bench-"));
  // The per-key rate limit is not what is measured here.
  const config = loadConfig({ QUIRE_DATA_DIR: dataDir, QUIRE_LOG_LEVEL: "silent", QUIRE_RATE_BURST: "1000000", QUIRE_RATE_PER_SECOND: "1000000" });
  const services = await openServices(config);
  const apps: FastifyInstance[] = [];
  try {
    const account = await createAccount(services.store, "bench");
    const owner = await services.store.accounts.getKeyOwnerForSigning(account.apiKey);
    if (!owner) throw new Error("no account");
    for (let i = 0; i < DOCUMENTS; i++) {
      const now = Date.now() + i;
      const doc = buildNewDocument(
        newDocumentIds(now),
        { accountId: owner.accountId, username: "bench", origin: "apiupload", orgDocType: "pdf", orgDocName: `report-${i}.pdf`, defaultTitle: `Report ${i}`, slurpUrl: "", originalSize: 1000, blobId: newBlobId() },
        {
          name: `report-${i}`, title: undefined, tags: ["bench", `t${i}`], commentsAllowed: true, description: `A document of the benchmark, number ${i}.`,
          downloadable: false, infoLink: "", language: "en", access: "public", explicit: false, category: "007000", type: "009000",
          ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
        },
        now,
      );
      await services.store.documents.insertWithJob(doc, "convert-document");
    }

    const deps = { config, store: services.store, blobs: services.blobs };
    // Quire as `quire serve` starts it (src/api-role.ts), its access line written to /dev/null.
    const logStream = accessLogDestination(openSync("/dev/null", "w"));
    const role = await startApiRole({ config, services, listen: { host: "127.0.0.1", port: 0 }, logger: httpLoggerOptions("info", logStream), logStream });
    const served = role.app;
    const unlogged = await buildApp({ deps, spool: services.blobs, ops: { metrics: createMetrics({ role: "api" }), checks: {} } });
    apps.push(served, unlogged);
    const query = signedQuery(account.apiSecret, { action: "svc.documents.list", apiKey: account.apiKey, format: "json", pageSize: String(DOCUMENTS) });
    const quireUrl = `${role.address}/1_0?${query}`;
    const unloggedUrl = `${await listen(unlogged)}/1_0?${query}`;
    const answer = await (await fetch(quireUrl)).text();
    const parsed = JSON.parse(answer) as { rsp: { stat: string; _content: { result?: { _content: unknown[] } } } };
    if (parsed.rsp.stat !== "ok" || parsed.rsp._content.result?._content.length !== DOCUMENTS) throw new Error(`unexpected answer: ${answer.slice(0, 300)}`);

    const bare = Fastify({ logger: false });
    apps.push(bare);
    bare.get("/", (_req, reply) => reply.header("cache-control", "no-store").type("application/json; charset=utf-8").send(answer));
    const bareUrl = `${await listen(bare)}/`;

    const [baseline, list, listUnlogged] = await measureInTurn([bareUrl, quireUrl, unloggedUrl]);
    const line = (label: string, m: Figures) => `${label.padEnd(52)} ${m.rps.toFixed(0).padStart(8)} req/s   p99 ${m.p99} ms   ${m.cpuUs.toFixed(1)} µs CPU a request\n`;
    process.stdout.write(
      `${CONNECTIONS} connections; ${ROUNDS} rounds of ${ROUND_S} s each, taken in turn after ${WARMUP_S} s warm-up; medians; answer ${Buffer.byteLength(answer)} bytes\n`,
    );
    process.stdout.write(line("bare Fastify, constant JSON (same bytes)", baseline!));
    process.stdout.write(line(`svc.documents.list, ${DOCUMENTS} documents, json, as served`, list!));
    process.stdout.write(line("  the same with logging off", listUnlogged!));
    process.stdout.write(`ratio ${list!.ratio.toFixed(2)} as served, ${listUnlogged!.ratio.toFixed(2)} with logging off (medians of the rounds' ratios; wanted >= 0.55)\n`);
    process.stdout.write(
      `ratio of CPU a request (bare's / Quire's) ${list!.cpuRatio.toFixed(2)} as served, ${listUnlogged!.cpuRatio.toFixed(2)} with logging off (what the throughput ratio is on an otherwise idle core)\n`,
    );
  } finally {
    for (const app of apps) await app.close();
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await benchApi();
