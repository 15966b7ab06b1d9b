/**
 * Anonymous reading of a document whose text is huge (issue 11 item 4): a ~35 MB-text PDF of a few
 * hundred kilobytes, generated here, converted by the real pipeline, then read by waves of 8
 * concurrent anonymous views (every 250 ms) from a real `quire serve --no-worker` process of the
 * compiled build. Printed: `/healthz` latency (p50,
 * p99) while they read, and the server's resident memory growth (peak and at the end), against a
 * baseline measured in the same run: `/healthz` idle, and the same 8 readers on a small document.
 *
 * `npm run bench -- reading`. Targets: `/healthz` p99 under 50 ms, memory growth under 50 MB.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { QuireClient } from "../src/client/quire-client.ts";
import { writeDenseTextPdf } from "../test/helpers/dense-text-pdf.ts";
import { startTestServer } from "../test/helpers/test-server.ts";
import { startTestWorker } from "../test/helpers/test-worker.ts";
import { cpuSeconds, exec, FIXTURES } from "./bench-common.ts";
import { mb, publishAndWait, percentile, startCompiledServer, timedGet, type CompiledServer } from "./compiled-server.ts";

const DENSE_PAGES = 720; // about 48 000 characters a page: ~35 MB of text
const READERS = 8;
const PHASE_MS = 10_000;
const WARM_UP_MS = 3_000;
const WAVE_MS = 250;
const PROBE_EVERY_MS = 20;

const ROOT = new URL("../", import.meta.url).pathname;

const agent = new Agent({ keepAlive: true, maxSockets: READERS + 2 });

const get = (url: string, headers: Record<string, string> = {}) => timedGet(url, agent, headers);

interface Phase {
  healthz: number[];
  views: number;
  viewMs: number[];
  rssStart: number;
  rssPeak: number;
  rssEnd: number;
}

/** `readers` loops viewing `page` (none: idle) while /healthz is probed and the server's memory sampled. */
async function phase(server: CompiledServer, page: string | undefined, readers: number, ms = PHASE_MS): Promise<Phase> {
  const rssStart = await server.rssBytes();
  let rssPeak = rssStart;
  const until = performance.now() + ms;
  const result: Phase = { healthz: [], views: 0, viewMs: [], rssStart, rssPeak, rssEnd: 0 };
  // Waves of `readers` views at once, as many visitors opening the page together, every WAVE_MS.
  const readersWaves = async () => {
    while (performance.now() < until) {
      const next = performance.now() + WAVE_MS;
      await Promise.all(Array.from({ length: readers }, async () => {
        // As a browser asks: compressed, no validator (a new anonymous visitor each time).
        const r = await get(page!, { "accept-encoding": "gzip, deflate, br" });
        if (r.status !== 200) throw new Error(`reader page answered ${r.status}`);
        result.views++;
        result.viewMs.push(r.ms);
      }));
      await new Promise((res) => setTimeout(res, Math.max(0, next - performance.now())));
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
  const memory = async () => {
    while (performance.now() < until) {
      rssPeak = Math.max(rssPeak, await server.rssBytes());
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  await Promise.all([probe(), memory(), ...(page ? [readersWaves()] : [])]);
  result.rssPeak = rssPeak;
  result.rssEnd = await server.rssBytes();
  return result;
}

export async function benchReading(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "quire-bench-reading-"));
  // The pipeline runs here; the server measured is a process of its own on the same data.
  const converter = await startTestServer();
  let reading: CompiledServer | undefined;
  try {
    const pdf = join(scratch, "dense.pdf");
    const made = await writeDenseTextPdf(pdf, { pages: DENSE_PAGES });
    process.stdout.write(`reading: generated PDF ${(made.bytes / 1024).toFixed(0)} KB with ${mb(made.textChars)} MB of text, ${DENSE_PAGES} pages; converting...\n`);
    const worker = await startTestWorker(converter, { startOffice: false, jobTimeoutMs: 900_000 });
    const client = new QuireClient({ baseUrl: converter.url, apiKey: converter.account.apiKey, apiSecret: converter.account.apiSecret });
    const cpu0 = cpuSeconds();
    const t0 = performance.now();
    const dense = await publishAndWait(converter, client, pdf, "Dense text");
    process.stdout.write(`  converted in ${((performance.now() - t0) / 1000).toFixed(0)} s (${(cpuSeconds() - cpu0).toFixed(0)} CPU s here and in poppler)\n`);
    const small = await publishAndWait(converter, client, join(FIXTURES, "pdf-tcpdf-14pages.pdf"), "Small");
    await worker.stop();

    const dist = join(ROOT, ".tmp", `bench-reading-dist-${process.pid}`);
    await exec(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--out-dir", dist]);
    reading = await startCompiledServer(dist, converter.dataDir);
    // Warm-up (not reported): the server's code compiled and its caches of the small document made.
    await phase(reading, reading.url + small, READERS, WARM_UP_MS);
    const idle = await phase(reading, undefined, 0);
    const baseline = await phase(reading, reading.url + small, READERS);
    const heavy = await phase(reading, reading.url + dense, READERS);
    const size = await get(reading.url + dense);

    const line = (label: string, p: Phase) =>
      `  ${label.padEnd(34)} /healthz p50 ${percentile(p.healthz, 50).toFixed(1)} ms, p99 ${percentile(p.healthz, 99).toFixed(1)} ms (${p.healthz.length} probes)` +
      (p.views ? `; ${p.views} views, p50 ${percentile(p.viewMs, 50).toFixed(0)} ms` : "") +
      `; memory +${mb(p.rssPeak - p.rssStart)} MB peak, +${mb(p.rssEnd - p.rssStart)} MB at the end\n`;
    process.stdout.write(`reading: waves of ${READERS} concurrent anonymous views every ${WAVE_MS} ms for ${PHASE_MS / 1000} s, server RSS ${mb(idle.rssStart)} MB at start\n`);
    process.stdout.write(line("idle (baseline)", idle));
    process.stdout.write(line("small document, 14 pages (baseline)", baseline));
    process.stdout.write(line(`huge text, ${DENSE_PAGES} pages`, heavy));
    process.stdout.write(`  huge-text reader page: ${mb(size.bytes)} MB of HTML uncompressed\n`);
    const p99 = percentile(heavy.healthz, 99);
    process.stdout.write(
      `  figure: /healthz p99 ${p99.toFixed(1)} ms (target < 50), ${(p99 / percentile(idle.healthz, 99)).toFixed(2)}× idle, ` +
        `${(p99 / percentile(baseline.healthz, 99)).toFixed(2)}× small document; memory growth ${mb(heavy.rssPeak - heavy.rssStart)} MB peak (target < 50)\n`,
    );
  } finally {
    await reading?.kill();
    await rm(join(ROOT, ".tmp", `bench-reading-dist-${process.pid}`), { recursive: true, force: true });
    await converter.close();
    await rm(scratch, { recursive: true, force: true });
    agent.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await benchReading();
