/**
 * Conversion throughput and latency: the page renderer and the warm LibreOffice pool against the
 * plain command-line tools they replace.
 *
 * `npx tsx bench/convert.ts` (or `benchConvert()` from bench/run.ts). Every figure is a ratio against
 * a baseline measured in the same run, so it holds on whatever machine runs it:
 *  1. The pipeline's page step (renderPages(): read + thumb JPEGs, then renderCovers() from page 1)
 *     vs one `pdftoppm -jpeg` process scaling every page to the reading width, on the whole 352-page
 *     book: pages per second. Reference rows: the step on one process, pdftoppm on two.
 *  2. A warm OfficeConverter slot vs a cold `soffice --headless --convert-to pdf` on an existing
 *     profile: latency for a one-page and a 100-slide document.
 *  3. OfficeConverter with os.availableParallelism() slots vs 1 slot: conversions per minute over one
 *     small document per office format, each converted MIX_ROUNDS times.
 * Fixtures are read in place; everything written goes to a temporary folder that is removed.
 */
import { exec, FIXTURES } from "./bench-common.ts";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { prepareProfile } from "../src/convert/office-profile.ts";
import { SOFFICE } from "../src/convert/office-slot.ts";
import { OfficeConverter } from "../src/convert/office-to-pdf.ts";
import { inspectPdf, renderCovers, renderPages, type PdfLimits } from "../src/convert/pdf-pages.ts";
import { JPEG_QUALITY, RENDER_CONCURRENCY } from "../src/convert/pdf-render.ts";

/** What src/cli/worker-command.ts gives the pipeline. */
const WIDTHS = { thumb: 200, read: 1200 };
const LIMITS: PdfLimits = { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 120_000 };

const BOOK = join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf");
const ONE_PAGE = join(FIXTURES, "odt-libreoffice73-odf13.odt");
const SLIDES_100 = join(FIXTURES, "odp-symphony-100slides.odp");
/** One small document per office format the service accepts. */
const MIX = [
  "odt-libreoffice73-odf13.odt",
  "word6-poi.doc",
  "wordperfect6-tika.wpd",
  "sxw-ooo10-tika.sxw",
  "sxi-ooo10-tika.sxi",
  "rtf-word-tika.rtf",
  "odp-libreoffice73-odf13.odp",
  "ppt97-1slide-tika.ppt",
].map((name) => join(FIXTURES, name));

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function median(times: number, fn: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) samples.push(await timed(fn));
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? NaN;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

function row(cells: string[], widths: number[]): string {
  return `  ${cells.map((c, i) => (i === 0 ? pad(c, widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ")}\n`;
}

const out = (s: string): boolean => process.stdout.write(s);

// ---- 1. page images ---------------------------------------------------------------------------

/** A row of the page-images table: its label and the work timed (everything it writes goes to `dir`). */
interface PageRun {
  label: string;
  run(dir: string): Promise<void>;
}

/** pdftoppm writing JPEGs the reading width wide, over pages first..last. */
function pdftoppm(dir: string, first: number, last: number): Promise<void> {
  return exec("pdftoppm", ["-jpeg", "-cropbox", "-scale-to-x", String(WIDTHS.read), "-scale-to-y", "-1", "-f", String(first), "-l", String(last), BOOK, join(dir, `p${first}`)]);
}

/** What the pipeline's page step makes: both sizes of every page, then the covers from page 1. */
async function pipelineStep(dir: string, pageCount: number, processes: number): Promise<void> {
  const made = await renderPages(BOOK, join(dir, "pages"), { widths: WIDTHS, limits: LIMITS, processes });
  if (made.length !== 2 * pageCount) throw new Error(`renderPages made ${made.length} images for ${pageCount} pages`);
  await renderCovers(BOOK, join(dir, "covers"), LIMITS, made.find((p) => p.page === 1 && p.size === "read"));
}

const PAGE_ROUNDS = 3;

async function benchPages(scratch: string): Promise<void> {
  const { pageCount } = await inspectPdf(BOOK, LIMITS);
  const half = Math.ceil(pageCount / 2);
  const runs: PageRun[] = [
    // The book's pages are not all one size (page 1 is wider than the rest): -scale-to-x makes every
    // page as wide as the pipeline's reading size, where one -r for all would render most pages smaller.
    { label: `pdftoppm -jpeg -scale-to-x ${WIDTHS.read}: read size only, 1 process [baseline]`, run: (dir) => pdftoppm(dir, 1, pageCount) },
    { label: `pipeline step: ${WIDTHS.read} + ${WIDTHS.thumb} px + 3 covers, ${RENDER_CONCURRENCY} processes`, run: (dir) => pipelineStep(dir, pageCount, RENDER_CONCURRENCY) },
    { label: `pipeline step, 1 process (for reference)`, run: (dir) => pipelineStep(dir, pageCount, 1) },
    { label: `pdftoppm -jpeg, read size only, 2 processes (for reference)`, run: async (dir) => void (await Promise.all([pdftoppm(dir, 1, half), pdftoppm(dir, half + 1, pageCount)])) },
  ];
  // Rounds take every row in turn, so that a change in the machine's load (it is shared) falls on
  // all rows alike rather than on whichever ran during it.
  const samples: number[][] = runs.map(() => []);
  for (let round = 0; round < PAGE_ROUNDS; round++) {
    for (const [i, r] of runs.entries()) {
      const dir = join(scratch, "pages");
      await mkdir(dir);
      samples[i]?.push(await timed(() => r.run(dir)));
      await rm(dir, { recursive: true, force: true });
    }
  }
  const times = samples.map((s) => s.sort((a, b) => a - b)[Math.floor(s.length / 2)] ?? NaN);

  const base = pageCount / ((times[0] ?? NaN) / 1000);
  const w = [76, 6, 8, 6];
  out(`\n1. Page images: ${basename(BOOK)}, ${pageCount} pages, median of ${PAGE_ROUNDS} interleaved rounds (ratio = pages/s ÷ the baseline's; target >= 1.0)\n`);
  out(`   Compared: the pipeline's whole page step (both image sizes and the covers, JPEG q${JPEG_QUALITY}, on ${availableParallelism()} cores)\n`);
  out(`   against one pdftoppm process making the reading size alone (its default JPEG quality, 75).\n`);
  out(row(["", "s", "pages/s", "ratio"], w));
  runs.forEach((r, i) => {
    const ms = times[i] ?? NaN;
    const rate = pageCount / (ms / 1000);
    out(row([r.label, (ms / 1000).toFixed(1), rate.toFixed(1), `x${(rate / base).toFixed(2)}`], w));
  });
}

// ---- 2. warm vs cold LibreOffice --------------------------------------------------------------

async function coldSoffice(profileUrl: string, input: string, outDir: string): Promise<void> {
  await exec(SOFFICE, ["--headless", "--convert-to", "pdf", "--outdir", outDir, `-env:UserInstallation=${profileUrl}`, input]);
  await rm(join(outDir, basename(input).replace(/\.[^.]+$/, ".pdf")), { force: true });
}

async function benchLatency(scratch: string, office: OfficeConverter): Promise<void> {
  // The cold baseline's profile is prepared like a slot's and used once before timing, so what is
  // measured is soffice's start-up and shutdown, not the first-run profile creation.
  const profileUrl = await prepareProfile(join(scratch, "cold-profile"));
  const coldOut = join(scratch, "cold-out");
  await mkdir(coldOut);
  const warmPdf = join(scratch, "warm.pdf");

  const w = [36, 7, 10, 10, 8];
  out(`\n2. Office to PDF latency: warm slot (median of 5 after 1 warm-up) vs cold soffice (median of 3 after 1 untimed run on the same profile); ratio = cold ÷ warm (target >= 3 for the one-page document)\n`);
  out(row(["document", "pages", "cold ms", "warm ms", "ratio"], w));
  for (const input of [ONE_PAGE, SLIDES_100]) {
    await coldSoffice(profileUrl, input, coldOut);
    const cold = await median(3, () => coldSoffice(profileUrl, input, coldOut));
    await office.convert(input, warmPdf);
    const { pageCount } = await inspectPdf(warmPdf, LIMITS);
    const warm = await median(5, () => office.convert(input, warmPdf));
    out(row([basename(input), String(pageCount), cold.toFixed(0), warm.toFixed(0), `x${(cold / warm).toFixed(2)}`], w));
  }
}

// ---- 3. slots ---------------------------------------------------------------------------------

/** A small document converts in tens of milliseconds: 16 of them (the first version) gave ratios
 *  anywhere from 1.2 to 1.8 from run to run; about 100 keep each measurement several seconds long. */
const MIX_ROUNDS = 12;

/** Every document in MIX MIX_ROUNDS times, all queued at once; conversions per minute (slot start-up excluded). */
async function throughput(office: OfficeConverter, outDir: string): Promise<number> {
  const jobs = Array.from({ length: MIX_ROUNDS }, () => MIX).flat();
  const ms = await timed(() => Promise.all(jobs.map((input, i) => office.convert(input, join(outDir, `${i}.pdf`)))));
  return jobs.length / (ms / 60_000);
}

// ---- entry ------------------------------------------------------------------------------------

export async function benchConvert(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "quire-bench-convert-"));
  const workDir = join(scratch, "office");
  const mixOut = join(scratch, "mix");
  let office: OfficeConverter | undefined;
  try {
    await mkdir(mixOut);
    await benchPages(scratch);

    office = new OfficeConverter({ slots: 1, workDir, timeoutMs: 120_000 });
    await office.start();
    await benchLatency(scratch, office);

    const n = availableParallelism();
    await office.convert(MIX[0] ?? ONE_PAGE, join(mixOut, "warm-up.pdf"));
    const one = await throughput(office, mixOut);
    await office.close();
    office = new OfficeConverter({ slots: n, workDir, timeoutMs: 120_000 });
    await office.start();
    // A first conversion per slot, so that no slot is measured cold.
    await Promise.all(Array.from({ length: n }, (_, i) => office?.convert(MIX[i % MIX.length] ?? ONE_PAGE, join(mixOut, `warm-up-${i}.pdf`))));
    const many = await throughput(office, mixOut);

    const w = [36, 13, 7];
    out(`\n3. Office conversions per minute: ${MIX.length} small documents (one per format) x ${MIX_ROUNDS}, all queued at once; ratio = ÷ 1 slot's\n`);
    out(row(["", "conv/min", "ratio"], w));
    out(row(["1 slot [baseline]", one.toFixed(1), "x1.00"], w));
    out(row([`${n} slots (os.availableParallelism())`, many.toFixed(1), `x${(many / one).toFixed(2)}`], w));
  } finally {
    await office?.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await benchConvert();
