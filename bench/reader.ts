/**
 * The reader's first view over slow networks, in Debian's Chromium: a 20-page born-digital PDF
 * (the first 20 pages of the freeculture book), each run in a fresh browser context (nothing
 * cached), the network throttled through CDP (Network.emulateNetworkConditions): 10 Mbit/s with
 * 40 ms round trips, and 1.6 Mbit/s with 150 ms.
 *
 * `npm run bench -- reader`. Measured: page 1's image painted (Element Timing), LCP (largest-contentful-paint),
 * CLS (layout-shift entries without recent input, summed; the reader's header folding its description
 * when its script runs is most of it, not the page images: test/web/page-images-browser.test.ts) and the bytes of the first view (every
 * response's encoded length until the network has been idle for half a second after load).
 *
 * The baseline, in the same run and against the same server and document: the reader as it was
 * before the page variants (issue 30): every page and thumbnail its JPEG master at 1200 / 200 px,
 * no srcset and no preload. The bench makes that page from today's HTML by giving back its old
 * markup (`oldMarkup`), served to the browser in place of the real one; the images are the stored
 * masters, at their old addresses, which the server still serves.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { QuireClient, unwrap } from "../src/client/quire-client.ts";
import { launchChromium } from "../test/helpers/browser.ts";
import { startTestServer } from "../test/helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../test/helpers/test-worker.ts";
import { exec, FIXTURES } from "./bench-common.ts";

const PAGES = 20;
const RUNS = 3;
const NETWORKS = [
  { label: "10 Mbit/s, 40 ms", mbit: 10, rtt: 40, target: 1000 },
  { label: "1.6 Mbit/s, 150 ms", mbit: 1.6, rtt: 150, target: 2000 },
];
const SCREENS = [
  { label: "wide 1366×850 @1x", viewport: { width: 1366, height: 850 }, deviceScaleFactor: 1, isMobile: false },
  { label: "phone 390×844 @3x", viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true },
];

/** A real born-digital PDF of PAGES pages: the freeculture book's first pages, joined by poppler. */
async function shortPdf(dir: string): Promise<string> {
  await exec("pdfseparate", ["-f", "1", "-l", String(PAGES), join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf"), join(dir, "p-%d.pdf")]);
  const parts = (await readdir(dir)).filter((f) => f.startsWith("p-")).sort((a, b) => Number(a.slice(2, -4)) - Number(b.slice(2, -4)));
  const out = join(dir, "twenty.pdf");
  await exec("pdfunite", [...parts.map((p) => join(dir, p)), out]);
  return out;
}

/** The reader's HTML as it was before issue 30: masters at their old addresses, no srcset, no preload. */
export function oldMarkup(html: string): string {
  return html
    .replace(/<link rel="preload" as="image"[^>]*>\n?/, "")
    .replace(/ srcset="[^"]*"/g, "")
    .replace(/ sizes="[^"]*"/g, "")
    .replace(/\/pages\/w200\/(\d+)\?v=/g, "/pages/thumb/$1.jpg?v=")
    .replace(/\/pages\/w\d+\/(\d+)\?v=/g, "/pages/read/$1.jpg?v=");
}

interface Run {
  /** Page 1's image painted (Element Timing, its elementtiming="first-page"). */
  first: number;
  lcp: number;
  cls: number;
  bytes: number;
  images: number;
  imageBytes: number;
}

async function firstView(browser: Browser, url: string, html: string | undefined, net: (typeof NETWORKS)[number], screen: (typeof SCREENS)[number]): Promise<Run> {
  const context = await browser.newContext({ viewport: screen.viewport, deviceScaleFactor: screen.deviceScaleFactor, isMobile: screen.isMobile, hasTouch: screen.isMobile });
  try {
    const page = await context.newPage();
    if (html !== undefined) await page.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html, headers: { "content-security-policy": cspOf.get(url) ?? "" } }));
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: net.rtt, downloadThroughput: (net.mbit * 1e6) / 8, uploadThroughput: (net.mbit * 1e6) / 8 });
    let bytes = 0;
    let imageBytes = 0;
    let images = 0;
    const types = new Map<string, string>();
    cdp.on("Network.responseReceived", (e) => types.set(e.requestId, e.type));
    cdp.on("Network.loadingFinished", (e) => {
      bytes += e.encodedDataLength;
      if (types.get(e.requestId) === "Image") {
        images++;
        imageBytes += e.encodedDataLength;
      }
    });
    await page.addInitScript(() => {
      const w = window as unknown as { __lcp: number; __cls: number; __first: number };
      w.__lcp = 0;
      w.__cls = 0;
      w.__first = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as Array<PerformanceEntry & { renderTime: number; loadTime: number; identifier: string }>) {
          if (e.identifier === "first-page") w.__first = e.renderTime || e.loadTime;
        }
      }).observe({ type: "element", buffered: true });
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__lcp = (e as PerformanceEntry & { renderTime: number; loadTime: number }).renderTime || (e as PerformanceEntry & { loadTime: number }).loadTime;
      }).observe({ type: "largest-contentful-paint", buffered: true });
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as Array<PerformanceEntry & { value: number; hadRecentInput: boolean }>) if (!e.hadRecentInput) w.__cls += e.value;
      }).observe({ type: "layout-shift", buffered: true });
    });
    await page.goto(url, { waitUntil: "load", timeout: 120_000 });
    await page.waitForLoadState("networkidle", { timeout: 120_000 });
    const { lcp, cls, first } = await page.evaluate(() => {
      const w = window as unknown as { __lcp: number; __cls: number; __first: number };
      return { lcp: w.__lcp, cls: w.__cls, first: w.__first };
    });
    return { first, lcp, cls, bytes, images, imageBytes };
  } finally {
    await context.close();
  }
}

/** The real answer's policy, given to the old markup too (its one inline loader is the same). */
const cspOf = new Map<string, string>();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export async function benchReader(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "quire-bench-reader-"));
  const server = await startTestServer();
  // PDF fixtures never reach LibreOffice: not starting it saves seconds and two office processes per file.
  let worker: TestWorker | undefined = await startTestWorker(server, { startOffice: false });
  const browser = await launchChromium();
  try {
    const pdf = await shortPdf(scratch);
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const id = (unwrap(await client.upload(pdf, { title: "Twenty pages" })).document as { documentId: string }).documentId;
    let doc = await server.services.store.documents.getForConversion(id);
    while (doc?.state === "P") {
      await new Promise((r) => setTimeout(r, 200));
      doc = await server.services.store.documents.getForConversion(id);
    }
    if (doc?.state !== "A" || doc.pageCount !== PAGES) throw new Error(`conversion ended ${doc?.state} with ${doc?.pageCount} pages`);
    await worker.stop();
    worker = undefined;
    const reader = `${server.url}/${doc.username}/docs/${doc.name}`;
    const res = await fetch(reader);
    cspOf.set(reader, res.headers.get("content-security-policy") ?? "");
    const old = oldMarkup(await res.text());
    const variants = { before: old, after: undefined } as const;

    process.stdout.write(`reader: first view of a ${PAGES}-page born-digital PDF, Chromium ${browser.version()}, fresh context each run, median of ${RUNS}\n`);
    process.stdout.write(`  before: every page a 1200 px JPEG q90 master, no srcset/preload (the old markup); after: srcset of WebP variants, preload\n`);
    process.stdout.write(`  (one unmeasured run of each first: variants other than page 1's are made on their first request; machine shared)\n`);
    for (const screen of SCREENS) {
      for (const v of Object.values(variants)) await firstView(browser, reader, v, NETWORKS[0]!, screen);
      for (const net of NETWORKS) {
        const runs: Record<keyof typeof variants, Run[]> = { before: [], after: [] };
        for (let i = 0; i < RUNS; i++) {
          // Alternating keeps a drift of the machine's load out of the ratio.
          for (const [k, v] of Object.entries(variants) as Array<[keyof typeof variants, string | undefined]>) runs[k].push(await firstView(browser, reader, v, net, screen));
        }
        const row = (k: keyof typeof variants) => {
          const r = runs[k];
          return {
            first: median(r.map((x) => x.first)),
            lcp: median(r.map((x) => x.lcp)),
            cls: Math.max(...r.map((x) => x.cls)),
            kib: median(r.map((x) => x.bytes)) / 1024,
            img: median(r.map((x) => x.imageBytes)) / 1024,
            n: median(r.map((x) => x.images)),
          };
        };
        const [b, a] = [row("before"), row("after")];
        process.stdout.write(`  ${screen.label}, ${net.label} (target LCP <= ${net.target} ms, CLS 0):\n`);
        for (const [label, r] of [["before", b], ["after", a]] as const) {
          process.stdout.write(`    ${label.padEnd(7)} page 1 painted ${r.first.toFixed(0).padStart(5)} ms  LCP ${r.lcp.toFixed(0).padStart(5)} ms  CLS ${r.cls.toFixed(3)}  first view ${r.kib.toFixed(0).padStart(5)} KiB (images ${r.img.toFixed(0)} KiB in ${r.n})\n`);
        }
        process.stdout.write(`    after ÷ before: page 1 painted x${(a.first / b.first).toFixed(2)}, LCP x${(a.lcp / b.lcp).toFixed(2)}, bytes x${(a.kib / b.kib).toFixed(2)}${Math.max(a.first, a.lcp) <= net.target ? "" : "  (above target)"}\n`);
      }
    }
  } finally {
    await browser.close();
    await worker?.stop();
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await benchReader();
