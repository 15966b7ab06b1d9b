/**
 * Renderer and page-image encoder comparison behind src/convert/pdf-render.ts.
 *
 * `npx tsx bench/render.ts` (or `benchRender()` from bench/run.ts). Every figure is measured in the
 * same run as its baseline, poppler's `pdftoppm`, so the ratios hold on whatever machine runs it.
 * The WASM candidates are optional: they are not project dependencies (mupdf is AGPL-3.0), so they
 * are measured only when present, e.g. after `npm install --no-save mupdf @hyzyla/pdfium`.
 */
import { exec, FIXTURES } from "./bench-common.ts";
import { luma, ssim, type Raw } from "./image-quality.ts";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import sharp, { type Sharp } from "sharp";
import { inspectPdf, renderPages } from "../src/convert/pdf-pages.ts";
import { PAGE_WIDTHS } from "../src/domain/page-images.ts";
import { DEFAULT_SANDBOX } from "../src/convert/sandbox.ts";

const READ_WIDTH = PAGE_WIDTHS.read;
const RUNS = 5;

interface Doc {
  label: string;
  path: string;
  pages: number;
}

const DOCS: Doc[] = [
  { label: "tcpdf, 14 pages", path: join(FIXTURES, "pdf-tcpdf-14pages.pdf"), pages: 14 },
  { label: "freeculture, pages 1-30", path: join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf"), pages: 30 },
];

interface Candidate {
  name: string;
  licence: string;
  /** Renders pages 1..pages at READ_WIDTH to pixels (not to a compressed file, which is the encoder's job). */
  run(doc: Doc, scratch: string): Promise<void>;
}

const scaleArgs = ["-scale-to-x", String(READ_WIDTH), "-scale-to-y", "-1", "-cropbox"];

function pdftoppm(first: number, last: number) {
  return (doc: Doc, scratch: string) =>
    exec("pdftoppm", [...scaleArgs, "-f", String(first), "-l", String(Math.min(last, doc.pages)), doc.path, join(scratch, `p${first}`)]);
}

/** What renderPages runs: poppler writes the reading-size JPEG itself, with no second encoding. */
function pdftoppmJpeg(first: number, last: number) {
  return (doc: Doc, scratch: string) =>
    exec("pdftoppm", ["-jpeg", "-jpegopt", "quality=90", ...scaleArgs, "-f", String(first), "-l", String(Math.min(last, doc.pages)), doc.path, join(scratch, `j${first}`)]);
}

function pdftocairo(first: number, last: number) {
  return (doc: Doc, scratch: string) =>
    exec("pdftocairo", ["-tiff", "-tiffcompression", "none", ...scaleArgs, "-f", String(first), "-l", String(Math.min(last, doc.pages)), doc.path, join(scratch, `c${first}`)]);
}

/** Two processes on halves of the range: what the shipped pipeline does on 2 cores. */
function halves(make: (first: number, last: number) => (doc: Doc, scratch: string) => Promise<void>) {
  return async (doc: Doc, scratch: string) => {
    const mid = Math.ceil(doc.pages / 2);
    await Promise.all([make(1, mid)(doc, scratch), make(mid + 1, doc.pages)(doc, scratch)]);
  };
}

// Minimal shapes of the optional WASM packages, loaded by a computed name so that type-checking
// does not depend on them being installed.
interface MupdfModule {
  Document: { openDocument(data: Uint8Array, magic: string): MupdfDocument };
  Matrix: { scale(sx: number, sy: number): unknown };
  ColorSpace: { DeviceRGB: unknown };
}
interface MupdfDocument {
  loadPage(i: number): { getBounds(): number[]; toPixmap(m: unknown, cs: unknown, alpha: boolean, extras: boolean): { getPixels(): Uint8ClampedArray; destroy(): void }; destroy(): void };
  destroy(): void;
}
interface PdfiumModule {
  PDFiumLibrary: { init(): Promise<PdfiumLibrary> };
}
interface PdfiumLibrary {
  loadDocument(data: Uint8Array): Promise<{ getPage(i: number): PdfiumPage; destroy(): void }>;
  destroy(): void;
}
interface PdfiumPage {
  getOriginalSize(): { originalWidth: number; originalHeight: number };
  render(o: { width: number; height: number; render: "bitmap" }): Promise<{ data: Uint8Array }>;
}

async function optional<T>(name: string): Promise<T | undefined> {
  try {
    return (await import(name)) as T;
  } catch {
    return undefined;
  }
}

async function wasmCandidates(notes: string[]): Promise<Candidate[]> {
  const out: Candidate[] = [];
  let t = performance.now();
  const mupdf = await optional<MupdfModule>("mupdf");
  if (mupdf) {
    notes.push(`mupdf: module load ${(performance.now() - t).toFixed(0)} ms once per process (not counted below)`);
    out.push({
      name: "mupdf (WASM, in-process, 1 thread)",
      licence: "AGPL-3.0-or-later",
      async run(doc) {
        const d = mupdf.Document.openDocument(await readFile(doc.path), "application/pdf");
        for (let i = 0; i < doc.pages; i++) {
          const page = d.loadPage(i);
          const b = page.getBounds();
          const s = READ_WIDTH / ((b[2] ?? 0) - (b[0] ?? 0));
          const pix = page.toPixmap(mupdf.Matrix.scale(s, s), mupdf.ColorSpace.DeviceRGB, false, true);
          pix.getPixels();
          pix.destroy();
          page.destroy();
        }
        d.destroy();
      },
    });
  } else notes.push("mupdf: not installed, skipped (npm install --no-save mupdf)");
  t = performance.now();
  const pdfium = await optional<PdfiumModule>("@hyzyla/pdfium");
  if (pdfium) {
    const lib = await pdfium.PDFiumLibrary.init();
    notes.push(`@hyzyla/pdfium: module load + init ${(performance.now() - t).toFixed(0)} ms once per process (not counted below)`);
    out.push({
      name: "PDFium @hyzyla/pdfium (WASM, in-process, 1 thread)",
      licence: "MIT wrapper, PDFium BSD-3-Clause/Apache-2.0",
      async run(doc) {
        const d = await lib.loadDocument(await readFile(doc.path));
        for (let i = 0; i < doc.pages; i++) {
          const page = d.getPage(i);
          const { originalWidth, originalHeight } = page.getOriginalSize();
          await page.render({ width: READ_WIDTH, height: Math.round((READ_WIDTH * originalHeight) / originalWidth), render: "bitmap" });
        }
        d.destroy();
      },
    });
  } else notes.push("@hyzyla/pdfium: not installed, skipped (npm install --no-save @hyzyla/pdfium)");
  return out;
}

async function median(times: number, fn: () => Promise<void>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? NaN;
}

async function withScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "quire-bench-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

async function benchRenderers(): Promise<void> {
  // renderPages takes whole documents: the measured pages are cut out once, before any timing, so
  // that its figure does not include pdfseparate and pdfunite.
  const cutDir = await mkdtemp(join(tmpdir(), "quire-bench-cut-"));
  try {
    const whole = new Map<Doc, string>();
    for (const doc of DOCS) whole.set(doc, await firstPages(doc, join(cutDir, String(whole.size))));
    await benchRenderersOn(whole);
  } finally {
    await rm(cutDir, { recursive: true, force: true });
  }
}

async function benchRenderersOn(whole: Map<Doc, string>): Promise<void> {
  const notes: string[] = [];
  const candidates: Candidate[] = [
    { name: "poppler pdftoppm (splash) -> PPM [baseline]", licence: "GPL-2.0/3.0, separate process", run: (d, s) => pdftoppm(1, d.pages)(d, s) },
    { name: "poppler pdftocairo (cairo) -> raw TIFF", licence: "GPL-2.0/3.0, separate process", run: (d, s) => pdftocairo(1, d.pages)(d, s) },
    { name: "poppler pdftoppm -> JPEG q90 (encoding included)", licence: "GPL-2.0/3.0, separate process", run: (d, s) => pdftoppmJpeg(1, d.pages)(d, s) },
    { name: "poppler pdftoppm, 2 processes in parallel", licence: "GPL, separate process", run: halves(pdftoppm) },
    { name: "poppler pdftocairo, 2 processes in parallel", licence: "GPL, separate process", run: halves(pdftocairo) },
    ...(await wasmCandidates(notes)),
    {
      name: "renderPages() as shipped: read + thumb JPEG files, 2 proc.",
      licence: "-",
      run: async (doc, scratch) => {
        await renderPages(whole.get(doc) ?? doc.path, join(scratch, "out"), {
          widths: PAGE_WIDTHS,
          limits: { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 120_000, sandbox: DEFAULT_SANDBOX },
        });
      },
    },
  ];

  process.stdout.write(`\nRenderers: ms per page at ${READ_WIDTH} px wide (median of ${RUNS} runs; ratio = ms/page ÷ pdftoppm's)\n`);
  for (const doc of DOCS) {
    process.stdout.write(`\n  ${doc.label}\n`);
    let baseline = NaN;
    for (const c of candidates) {
      const pages = doc.pages;
      const ms = await median(RUNS, () => withScratch((dir) => c.run(doc, dir)));
      const perPage = ms / pages;
      if (Number.isNaN(baseline)) baseline = perPage;
      process.stdout.write(`    ${pad(c.name, 56)} ${perPage.toFixed(1).padStart(7)} ms/page  x${(perPage / baseline).toFixed(2)}  (${c.licence})\n`);
    }
  }
  for (const n of notes) process.stdout.write(`  note: ${n}\n`);
}

/** renderPages takes whole documents: cut the measured pages out with poppler's own tools. */
async function firstPages(doc: Doc, scratch: string): Promise<string> {
  const total = (await inspectPdf(doc.path, { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 60_000, sandbox: DEFAULT_SANDBOX })).pageCount;
  if (total === doc.pages) return doc.path;
  const parts = join(scratch, "parts");
  await mkdir(parts, { recursive: true });
  await exec("pdfseparate", ["-f", "1", "-l", String(doc.pages), doc.path, join(parts, "%d.pdf")]);
  const out = join(scratch, "first.pdf");
  await exec("pdfunite", [...Array.from({ length: doc.pages }, (_, i) => join(parts, `${i + 1}.pdf`)), out]);
  return out;
}

// ---- encoders -------------------------------------------------------------------------------

// (Raw: see image-quality.ts)

async function rasterize(path: string, page: number): Promise<Raw> {
  return withScratch(async (dir) => {
    await exec("pdftocairo", ["-tiff", "-tiffcompression", "none", ...scaleArgs, "-f", String(page), "-l", String(page), "-singlefile", path, join(dir, "p")]);
    const { data, info } = await sharp(join(dir, "p.tif")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  });
}

interface Encoder {
  name: string;
  encode(img: Sharp, q: number): Sharp;
}

const ENCODERS: Encoder[] = [
  { name: "JPEG (sharp default: baseline, 4:2:0)", encode: (s, q) => s.jpeg({ quality: q }) },
  { name: "JPEG (mozjpeg: trellis, progressive)", encode: (s, q) => s.jpeg({ quality: q, mozjpeg: true }) },
  { name: "WebP lossy, effort 0", encode: (s, q) => s.webp({ quality: q, effort: 0 }) },
  { name: "WebP lossy, effort 2", encode: (s, q) => s.webp({ quality: q, effort: 2 }) },
  { name: "WebP lossy, effort 4 (default)", encode: (s, q) => s.webp({ quality: q, effort: 4 }) },
];

/**
 * "Equal visual quality": by eye at 4× zoom on body text, JPEG q85 and WebP q70 are the first
 * settings without visible ringing around glyphs; both measure 0.997 here.
 */
const TARGET_SSIM = 0.997;
const QUALITIES = [40, 50, 60, 65, 70, 75, 80, 85, 90, 95];

function rawInput(raw: Raw): Sharp {
  return sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } });
}

async function benchEncoders(): Promise<void> {
  const book = join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf");
  const tcpdf = join(FIXTURES, "pdf-tcpdf-14pages.pdf");
  const samples = [
    { label: "text page (freeculture p.20, body text)", raw: await rasterize(book, 20) },
    { label: "text page (tcpdf p.1, table of glyphs)", raw: await rasterize(tcpdf, 1) },
    { label: "picture page (freeculture p.1, full-page raster cover)", raw: await rasterize(book, 1) },
  ];
  process.stdout.write(`\nEncoders at ${READ_WIDTH} px: lowest quality reaching SSIM >= ${TARGET_SSIM} (luma, content windows); ms = median of 5 encodes; score = KiB x ms, lower is better\n`);
  const needed = new Map<Encoder, number>();
  for (const { label, raw } of samples) {
    const ref = luma(raw);
    process.stdout.write(`\n  ${label}, ${raw.width}x${raw.height}\n`);
    for (const enc of ENCODERS) {
      let chosen: { q: number; bytes: number; s: number } | undefined;
      for (const q of QUALITIES) {
        const out = await enc.encode(rawInput(raw), q).toBuffer();
        const back = await sharp(out).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        const s = ssim(ref, luma({ data: back.data, width: back.info.width, height: back.info.height }), raw.width, raw.height);
        if (s >= TARGET_SSIM) {
          chosen = { q, bytes: out.length, s };
          break;
        }
      }
      if (!chosen) {
        process.stdout.write(`    ${pad(enc.name, 40)} never reaches the target\n`);
        needed.set(enc, 100);
        continue;
      }
      const { q } = chosen;
      needed.set(enc, Math.max(needed.get(enc) ?? 0, q));
      const ms = await median(5, async () => {
        await enc.encode(rawInput(raw), q).toBuffer();
      });
      const kib = chosen.bytes / 1024;
      process.stdout.write(`    ${pad(enc.name, 40)} q${String(q).padEnd(3)} ${kib.toFixed(1).padStart(7)} KiB ${ms.toFixed(1).padStart(7)} ms  SSIM ${chosen.s.toFixed(4)}  score ${(kib * ms).toFixed(0)}\n`);
    }
  }

  // One quality per encoder for a whole document: the highest any sample needed.
  const pages = await withScratch(async (dir) => {
    await exec("pdftocairo", ["-tiff", "-tiffcompression", "none", ...scaleArgs, "-f", "1", "-l", "30", book, join(dir, "a")]);
    await exec("pdftocairo", ["-tiff", "-tiffcompression", "none", ...scaleArgs, tcpdf, join(dir, "b")]);
    const out: Raw[] = [];
    for (const name of (await readdir(dir)).sort()) {
      const { data, info } = await sharp(join(dir, name)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      out.push({ data, width: info.width, height: info.height });
    }
    return out;
  });
  process.stdout.write(`\n  whole documents: freeculture pp.1-30 + tcpdf 14 pages (${pages.length} pages), each encoder at the quality above\n`);
  for (const enc of ENCODERS) {
    const q = needed.get(enc) ?? 100;
    let bytes = 0;
    let ms = 0;
    for (const raw of pages) {
      const t = performance.now();
      bytes += (await enc.encode(rawInput(raw), q).toBuffer()).length;
      ms += performance.now() - t;
    }
    const kib = bytes / 1024 / pages.length;
    const perPage = ms / pages.length;
    process.stdout.write(`    ${pad(enc.name, 40)} q${String(q).padEnd(3)} ${kib.toFixed(1).padStart(7)} KiB/page ${perPage.toFixed(1).padStart(7)} ms/page  score ${(kib * perPage).toFixed(0)}\n`);
  }
}

export async function benchRender(): Promise<void> {
  await benchRenderers();
  await benchEncoders();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await benchRender();
