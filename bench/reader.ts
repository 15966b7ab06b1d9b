/**
 * Time to the first page image painted in the reader, for a 100-page document, in Debian's
 * Chromium: cold (a fresh browser profile, nothing cached) and warm (the same profile again, the
 * HTML revalidated by ETag, bundle and images from cache).
 *
 * `npm run bench -- reader`. The baseline, measured in the same run, is the same first-page image
 * opened on its own at its address (cold and warm likewise): the floor for showing that picture
 * from this server, so the ratio is what the reader's HTML, CSS and script add.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext } from "playwright-core";
import { QuireClient, unwrap } from "../src/client/quire-client.ts";
import { launchChromium } from "../test/helpers/browser.ts";
import { startTestServer } from "../test/helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../test/helpers/test-worker.ts";
import { exec, FIXTURES } from "./bench-common.ts";

const PAGES = 100;
const RUNS = 7;

/** A real 100-page PDF: the first 100 pages of the freeculture fixture, joined by poppler. */
async function hundredPagePdf(dir: string): Promise<string> {
  await exec("pdfseparate", ["-f", "1", "-l", String(PAGES), join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf"), join(dir, "p-%d.pdf")]);
  const parts = (await readdir(dir)).filter((f) => f.startsWith("p-")).sort((a, b) => Number(a.slice(2, -4)) - Number(b.slice(2, -4)));
  const out = join(dir, "hundred.pdf");
  await exec("pdfunite", [...parts.map((p) => join(dir, p)), out]);
  return out;
}

/** Milliseconds from navigation start until the first page image is painted (Element Timing). */
async function firstPaint(context: BrowserContext, url: string, image: boolean): Promise<number> {
  const page = await context.newPage();
  await page.goto(url, { waitUntil: "commit" });
  const ms = await page.evaluate(
    (isImage) =>
      new Promise<number>((resolve) => {
        // An image opened on its own has no elementtiming attribute: its largest contentful paint is the picture.
        const type = isImage ? "largest-contentful-paint" : "element";
        new PerformanceObserver((list) => {
          for (const e of list.getEntries() as Array<PerformanceEntry & { renderTime: number; loadTime: number; identifier?: string }>) {
            if (isImage || e.identifier === "first-page") resolve(e.renderTime || e.loadTime || e.startTime);
          }
        }).observe({ type, buffered: true });
      }),
    image,
  );
  await page.close();
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchReader(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "quire-bench-reader-"));
  const server = await startTestServer();
  // PDF fixtures never reach LibreOffice: not starting it saves seconds and two office processes per file.
  let worker: TestWorker | undefined = await startTestWorker(server, { startOffice: false });
  const browser = await launchChromium();
  try {
    const pdf = await hundredPagePdf(scratch);
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const id = (unwrap(await client.upload(pdf, { title: "Hundred pages" })).document as { documentId: string }).documentId;
    let doc = await server.services.store.documents.getForConversion(id);
    while (doc?.state === "P") {
      await new Promise((r) => setTimeout(r, 200));
      doc = await server.services.store.documents.getForConversion(id);
    }
    if (doc?.state !== "A" || doc.pageCount !== PAGES) throw new Error(`conversion ended ${doc?.state} with ${doc?.pageCount} pages`);
    await worker.stop();
    worker = undefined;
    const reader = `${server.url}/${doc.username}/docs/${doc.name}`;
    const html = await (await fetch(reader)).text();
    const imageUrl = server.url + html.match(/<img src="([^"]+)"[^>]*elementtiming="first-page"/)![1]!;

    const results: Record<string, number[]> = { "reader cold": [], "reader warm": [], "image cold": [], "image warm": [] };
    for (let i = 0; i < RUNS; i++) {
      // Alternating the two keeps a drift of the machine's load out of the ratio.
      for (const [label, url, isImage] of [["reader", reader, false], ["image", imageUrl, true]] as const) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        results[`${label} cold`]!.push(await firstPaint(context, url, isImage));
        results[`${label} warm`]!.push(await firstPaint(context, url, isImage));
        await context.close();
      }
    }
    process.stdout.write(`reader: first page image painted, ${PAGES}-page document, median of ${RUNS} (Chromium ${browser.version()})\n`);
    for (const cache of ["cold", "warm"] as const) {
      const r = median(results[`reader ${cache}`]!);
      const b = median(results[`image ${cache}`]!);
      process.stdout.write(`  ${cache}: reader ${r.toFixed(0)} ms, image alone ${b.toFixed(0)} ms, ratio ${(r / b).toFixed(2)}×\n`);
    }
  } finally {
    await browser.close();
    await worker?.stop();
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await benchReader();
