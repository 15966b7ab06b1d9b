/**
 * Conversion throughput and latency: the page renderer and the warm LibreOffice pool against the
 * plain command-line tools they replace.
 *
 * `npx tsx bench/convert.ts` (or `benchConvert()` from bench/run.ts; `--pages` for section 1 alone). Every figure is a ratio against
 * a baseline measured in the same run, so it holds on whatever machine runs it:
 *  1. The pipeline's page step (renderPages(): the reading size, as the worker runs it; then renderCovers() from page 1)
 *     vs two `pdftoppm -jpeg` processes scaling every page to the reading width, on the whole
 *     352-page book: time per page by wall clock and by CPU. Reference rows: both on one process.
 *     Then the page formats at equal visual quality (bench/page-formats.ts): bytes and encoding CPU.
 *  2. A warm OfficeConverter slot vs a cold `soffice --headless --convert-to pdf` on an existing
 *     profile: latency for a one-page and a 100-slide document.
 *  3. OfficeConverter with os.availableParallelism() slots vs 1 slot: conversions per minute over one
 *     small document per office format, each converted MIX_COPIES times, in alternating rounds.
 * Fixtures are read in place; everything written goes to a temporary folder that is removed.
 */
import { exec, FIXTURES } from "./bench-common.ts";
import { benchPageFormats } from "./page-formats.ts";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { prepareProfile } from "../src/convert/office-profile.ts";
import { SOFFICE } from "../src/convert/office-slot.ts";
import { OfficeConverter } from "../src/convert/office-to-pdf.ts";
import { inspectPdf, type PdfLimits } from "../src/convert/pdf-pages.ts";
import { JPEG_QUALITY, RENDER_CONCURRENCY } from "../src/convert/pdf-render.ts";
import { PAGE_WIDTHS } from "../src/domain/page-images.ts";
import { DEFAULT_SANDBOX } from "../src/convert/sandbox.ts";

const LIMITS: PdfLimits = { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 120_000, sandbox: DEFAULT_SANDBOX };

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

function middle(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

function row(cells: string[], widths: number[]): string {
  return `  ${cells.map((c, i) => (i === 0 ? pad(c, widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ")}\n`;
}

const out = (s: string): boolean => process.stdout.write(s);

// ---- 1. page images ---------------------------------------------------------------------------

/** A row of the page-images table: what it runs, each command in a child process of its own. */
interface PageRun {
  label: string;
  /** Commands run side by side; everything they write goes to `dir`. */
  commands(dir: string): string[][];
}

const TREE_CPU = fileURLToPath(new URL("./tree-cpu.py", import.meta.url));
const PAGE_STEP = fileURLToPath(new URL("./page-step.ts", import.meta.url));

/** Runs `command` under tree-cpu.py: the CPU seconds of its whole process tree, sandboxes included. */
async function cpuOf(command: string[], dir: string): Promise<number> {
  const result = join(dir, `cpu-${Math.random().toString(36).slice(2)}`);
  await exec("python3", [TREE_CPU, result, ...command]);
  return Number((await readFile(result, "utf8")).trim());
}

/** pdftoppm writing JPEGs (its default quality, 75, unless `quality`) `width` px wide, over pages first..last. */
function pdftoppm(dir: string, first: number, last: number, width: number = PAGE_WIDTHS.read, quality?: number): string[] {
  const jpeg = quality === undefined ? ["-jpeg"] : ["-jpeg", "-jpegopt", `quality=${quality}`];
  return ["pdftoppm", ...jpeg, "-cropbox", "-scale-to-x", String(width), "-scale-to-y", "-1", "-f", String(first), "-l", String(last), BOOK, join(dir, `p${width}-${first}`)];
}

/** Plain pdftoppm making what the page step makes of pages first..last: both sizes at the step's quality, one pass each. */
function pdftoppmBothSizes(dir: string, first: number, last: number): string[] {
  const pass = (width: number) => pdftoppm(dir, first, last, width, JPEG_QUALITY).map((a) => `'${a}'`).join(" ");
  return ["sh", "-c", `${pass(PAGE_WIDTHS.read)} && ${pass(PAGE_WIDTHS.thumb)}`];
}

/** The pipeline's page step (bench/page-step.ts) in a Node process of its own. */
function pageStep(dir: string, processes: number | "--noop"): string[] {
  const args = processes === "--noop" ? ["--noop"] : [BOOK, dir, String(processes)];
  return [process.execPath, "--import", "tsx", PAGE_STEP, ...args];
}

const PAGE_ROUNDS = 3;

export async function benchPages(scratch: string, opts: { rounds?: number; formats?: boolean } = {}): Promise<void> {
  const rounds = opts.rounds ?? PAGE_ROUNDS;
  const { pageCount } = await inspectPdf(BOOK, LIMITS);
  const half = Math.ceil(pageCount / 2);
  const steps = `${PAGE_WIDTHS.read} px + 3 covers`;
  const runs: PageRun[] = [
    // The book's pages are not all one size (page 1 is wider than the rest): -scale-to-x makes every
    // page as wide as the pipeline's reading size, where one -r for all would render most pages smaller.
    { label: `pdftoppm -jpeg -scale-to-x ${PAGE_WIDTHS.read}, read size only, 2 processes [baseline]`, commands: (dir) => [pdftoppm(dir, 1, half), pdftoppm(dir, half + 1, pageCount)] },
    { label: `pipeline page step: ${steps}, ${RENDER_CONCURRENCY} processes`, commands: (dir) => [pageStep(dir, RENDER_CONCURRENCY)] },
    {
      label: `pdftoppm, both sizes (q${JPEG_QUALITY}, a pass each), 2 processes (the step's images by plain tools)`,
      commands: (dir) => [pdftoppmBothSizes(dir, 1, half), pdftoppmBothSizes(dir, half + 1, pageCount)],
    },
    { label: `pdftoppm, read size only, 1 process (for reference)`, commands: (dir) => [pdftoppm(dir, 1, pageCount)] },
    { label: `pipeline page step, 1 process (for reference)`, commands: (dir) => [pageStep(dir, 1)] },
  ];
  // Rounds take every row in turn, so that a change in the machine's load (it is shared) falls on
  // all rows alike rather than on whichever ran during it.
  const walls: number[][] = runs.map(() => []);
  const cpus: number[][] = runs.map(() => []);
  const starts: number[] = [];
  for (let round = 0; round < rounds; round++) {
    starts.push(await cpuOf(pageStep(scratch, "--noop"), scratch));
    for (const [i, r] of runs.entries()) {
      const dir = join(scratch, "pages");
      await mkdir(dir);
      const t = performance.now();
      const cpu = await Promise.all(r.commands(dir).map((c) => cpuOf(c, scratch)));
      walls[i]?.push(performance.now() - t);
      cpus[i]?.push(cpu.reduce((a, b) => a + b, 0));
      await rm(dir, { recursive: true, force: true });
    }
  }
  // A page step's Node process spends this much starting and loading modules; a worker does that once.
  const start = middle(starts);
  const cpuPerPage = runs.map((r, i) => (middle(cpus[i] ?? []) - (r.label.startsWith("pipeline") ? start : 0)) / pageCount);
  const wallPerPage = walls.map((w) => middle(w) / pageCount);
  const [baseWall, baseCpu] = [wallPerPage[0] ?? NaN, cpuPerPage[0] ?? NaN];

  const w = [86, 7, 7, 6, 9, 6];
  out(`\n1. Page images: ${basename(BOOK)}, ${pageCount} pages, median of ${rounds} interleaved rounds\n`);
  out(`   The pipeline's whole page step (the reading size and the covers, JPEG q${JPEG_QUALITY}, sandboxed) against plain\n`);
  out(`   pdftoppm making the reading size alone (its default JPEG quality, 75) on the same ${availableParallelism()} cores.\n`);
  out(`   ratio = the baseline's time per page ÷ the row's (target >= 0.8): by wall time, and by CPU time per page\n`);
  out(`   (user + sys of every process of the row, sandboxed ones included; bench/tree-cpu.py). On a shared machine\n`);
  out(`   the wall ratio says how busy the machine was; the CPU ratio what the work itself costs.\n`);
  out(row(["", "wall s", "pages/s", "ratio", "CPU ms/p", "ratio"], w));
  runs.forEach((r, i) => {
    const wall = wallPerPage[i] ?? NaN;
    const cpu = cpuPerPage[i] ?? NaN;
    out(row([r.label, ((wall * pageCount) / 1000).toFixed(1), (1000 / wall).toFixed(1), `x${(baseWall / wall).toFixed(2)}`, (cpu * 1000).toFixed(1), `x${(baseCpu / cpu).toFixed(2)}`], w));
  });
  out(`   (Node start and module loading, ${start.toFixed(2)} s of CPU per page-step process, is subtracted from the step's CPU.)\n`);
  if (opts.formats !== false) await benchPageFormats();
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

/** Copies of MIX per measurement. A small document converts in tens of milliseconds: one batch of
 *  16 (the first version) measured 1 slot and then N slots about a second each, and the ratio went
 *  anywhere from x0.6 to x1.8 with the shared machine's load. Now both converters stay warm side by
 *  side, rounds alternate them, and each round's ratio pairs two measurements taken back to back. */
const MIX_COPIES = 6;
const SLOT_ROUNDS = 5;

/** Every document in MIX MIX_COPIES times, all queued at once; conversions per minute (slot start-up excluded). */
async function throughput(office: OfficeConverter, outDir: string): Promise<number> {
  const jobs = Array.from({ length: MIX_COPIES }, () => MIX).flat();
  const ms = await timed(() => Promise.all(jobs.map((input, i) => office.convert(input, join(outDir, `${i}.pdf`)))));
  return jobs.length / (ms / 60_000);
}

async function benchSlots(scratch: string, one: OfficeConverter, many: OfficeConverter, n: number): Promise<void> {
  const mixOut = join(scratch, "mix");
  await mkdir(mixOut);
  // A first conversion per slot, so that no slot is measured cold.
  await Promise.all(Array.from({ length: n }, (_, i) => many.convert(MIX[i % MIX.length] ?? ONE_PAGE, join(mixOut, `warm-up-${i}.pdf`))));
  await one.convert(MIX[0] ?? ONE_PAGE, join(mixOut, "warm-up.pdf"));
  const ones: number[] = [];
  const manys: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < SLOT_ROUNDS; round++) {
    // Which goes first alternates too, so neither always follows the other's leftovers.
    const [a, b] = round % 2 === 0 ? [one, many] : [many, one];
    const ta = await throughput(a, mixOut);
    const tb = await throughput(b, mixOut);
    const [o, m] = a === one ? [ta, tb] : [tb, ta];
    ones.push(o);
    manys.push(m);
    ratios.push(m / o);
  }
  const w = [36, 13, 7];
  out(`\n3. Office conversions per minute: ${MIX.length} small documents (one per format) x ${MIX_COPIES}, all queued at once; median of ${SLOT_ROUNDS} alternating rounds; ratio = median of each round's N slots ÷ 1 slot\n`);
  out(row(["", "conv/min", "ratio"], w));
  out(row(["1 slot [baseline]", middle(ones).toFixed(1), "x1.00"], w));
  out(row([`${n} slots (os.availableParallelism())`, middle(manys).toFixed(1), `x${middle(ratios).toFixed(2)}`], w));
  out(`  per-round ratios: ${ratios.map((r) => r.toFixed(2)).join(", ")}\n`);
}

// ---- entry ------------------------------------------------------------------------------------

export async function benchConvert(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "quire-bench-convert-"));
  const n = availableParallelism();
  let one: OfficeConverter | undefined;
  let many: OfficeConverter | undefined;
  try {
    await benchPages(scratch);

    one = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, slots: 1, workDir: join(scratch, "office-1"), timeoutMs: 120_000 });
    await one.start();
    await benchLatency(scratch, one);

    many = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, slots: n, workDir: join(scratch, `office-${n}`), timeoutMs: 120_000 });
    await many.start();
    await benchSlots(scratch, one, many, n);
  } finally {
    await one?.close();
    await many?.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === "--pages") {
    const scratch = await mkdtemp(join(tmpdir(), "quire-bench-pages-"));
    await benchPages(scratch).finally(() => rm(scratch, { recursive: true, force: true }));
  } else await benchConvert();
}
