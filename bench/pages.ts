/**
 * The reader's page images: bytes and visual quality of what it is served now against what it was
 * served before (every page as the 1200 px JPEG q90 master), on sample pages of every kind
 * (text, scan, photo, slide), what each encoding costs, where the conversion's page step spends its
 * processor time, and the step against plain pdftoppm in the same run.
 *
 * `npm run bench -- pages` (`npx tsx bench/pages.ts --no-step` skips the page-step rounds).
 *
 * Quality: SSIM of luma over the windows with content (image-quality.ts), against the page's
 * lossless rendering (pdftoppm's own pixels at 1200 px, or resized with sharp to the width compared).
 * "Equal quality" at a width is the SSIM that the old encoding, JPEG q90, reaches at that width.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import sharp from "sharp";
import { exec, FIXTURES } from "./bench-common.ts";
import { benchPages as benchPageStep } from "./convert.ts";
import { luma, ssim, type Raw } from "./image-quality.ts";
import { ppmPages } from "./ppm-stream.ts";
import { renderCovers, renderPages, type PdfLimits } from "../src/convert/pdf-pages.ts";
import { JPEG_QUALITY } from "../src/convert/pdf-render.ts";
import { PAGE_ENCODINGS, PAGE_WIDTHS, VARIANT_WIDTHS, type PageClass } from "../src/domain/page-images.ts";
import { variantOfMaster } from "../src/page-variants.ts";
import { DEFAULT_SANDBOX } from "../src/convert/sandbox.ts";

const LIMITS: PdfLimits = { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 120_000, sandbox: DEFAULT_SANDBOX };
const BOOK = join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf");
const out = (s: string): boolean => process.stdout.write(s);

export interface Sample {
  kind: "text" | "scan" | "photo" | "slide";
  label: string;
  /** The page's lossless pixels at 1200 px. */
  ref: Raw;
  /** The page as it was served: the master JPEG q90 at 1200 px (poppler's own, as the pipeline writes it). */
  master: Buffer;
}

/** A PDF page at the reading width: pdftoppm's pixels (lossless) and its JPEG q90 (the master). */
async function pdfPage(pdf: string, page: number, dir: string): Promise<{ ref: Raw; master: Buffer }> {
  const scale = ["-cropbox", "-scale-to-x", String(PAGE_WIDTHS.read), "-scale-to-y", "-1", "-f", String(page), "-l", String(page)];
  const child = spawn("pdftoppm", [...scale, pdf], { stdio: ["ignore", "pipe", "ignore"] });
  let ref: Raw | undefined;
  for await (const p of ppmPages(child.stdout, 50e6)) ref ??= { data: p.pixels, width: p.width, height: p.height };
  if (!ref) throw new Error(`no pixels for ${pdf} p.${page}`);
  const stem = join(dir, `m-${basename(pdf)}-${page}`);
  await exec("pdftoppm", ["-jpeg", "-jpegopt", `quality=${JPEG_QUALITY}`, ...scale, "-singlefile", pdf, stem]);
  return { ref, master: await readFile(`${stem}.jpg`) };
}

/** An image page (a photo uploaded as such): its pixels at 1200 px, and their JPEG q90. */
async function imagePage(file: string): Promise<{ ref: Raw; master: Buffer }> {
  const { data, info } = await sharp(file).resize({ width: PAGE_WIDTHS.read }).removeAlpha().toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
  const ref = { data, width: info.width, height: info.height };
  return { ref, master: await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).jpeg({ quality: JPEG_QUALITY }).toBuffer() };
}

export async function samples(dir: string): Promise<Sample[]> {
  // Slides come from LibreOffice, as a presentation uploaded would.
  await exec("soffice", ["--headless", `-env:UserInstallation=file://${join(dir, "lo-profile")}`, "--convert-to", "pdf", "--outdir", dir, join(FIXTURES, "pptx-ppt2010-10slides-layouts-poi.pptx")]);
  const slides = join(dir, "pptx-ppt2010-10slides-layouts-poi.pdf");
  const list: Array<[Sample["kind"], string, Promise<{ ref: Raw; master: Buffer }>]> = [
    ["text", "book body text (freeculture p.20)", pdfPage(BOOK, 20, dir)],
    ["text", "glyph table (tcpdf p.1)", pdfPage(join(FIXTURES, "pdf-tcpdf-14pages.pdf"), 1, dir)],
    ["text", "web page print (quartz p.1)", pdfPage(join(FIXTURES, "pdf-quartz-firefox-1page.pdf"), 1, dir)],
    ["text", "office text (acrobat9 p.1)", pdfPage(join(FIXTURES, "pdf-acrobat9-fonts-not-embedded.pdf"), 1, dir)],
    ["scan", "scanned letter (faa p.1)", pdfPage(join(FIXTURES, "ocr-scanned-2pages-faa-advisory.pdf"), 1, dir)],
    ["scan", "scanned page (french p.1)", pdfPage(join(FIXTURES, "ocr-scanned-french-ocrmypdf.pdf"), 1, dir)],
    ["scan", "scan in a mixed PDF (p.2)", pdfPage(join(FIXTURES, "ocr-mixed-6pages-text-and-scans-ocrmypdf.pdf"), 2, dir)],
    ["photo", "book cover (freeculture p.1)", pdfPage(BOOK, 1, dir)],
    ["photo", "photo uploaded (img-photo-exif.jpg)", imagePage(join(FIXTURES, "img-photo-exif-tika.jpg"))],
    ["slide", "slide (pptx 2010 p.1)", pdfPage(slides, 1, dir)],
    ["slide", "slide (pptx 2010 p.4)", pdfPage(slides, 4, dir)],
  ];
  const made: Sample[] = [];
  for (const [kind, label, page] of list) made.push({ kind, label, ...(await page) });
  return made;
}

/** `raw` resized to `width` (the reference at a smaller width). */
async function resized(raw: Raw, width: number): Promise<Raw> {
  if (width === raw.width) return raw;
  const { data, info } = await sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } }).resize({ width }).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

async function ssimOf(ref: Raw, encoded: Buffer): Promise<number> {
  const { data, info } = await sharp(encoded).removeAlpha().toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
  return ssim(luma(ref), luma({ data, width: info.width, height: info.height }), ref.width, ref.height);
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const kib = (n: number) => (n / 1024).toFixed(1);

/** The issue's targets (issue 30, item 1): bytes of the new pages ÷ the old at equal SSIM. */
const TARGETS: Record<string, number> = { text: 0.35, all: 0.6 };

/** What the reader sends now, per sample: each width's variant, its bytes against the old 1200 px JPEG, its SSIM against the target. */
async function formatsTable(list: Sample[]): Promise<void> {
  const widths = [...VARIANT_WIDTHS].reverse();
  out(`\n1. Bytes and SSIM per page: the old page (JPEG q${JPEG_QUALITY}, ${PAGE_WIDTHS.read} px, the master) against the WebP variants the reader gets now.\n`);
  out(`   At each width: KiB, ratio to the old page's bytes, SSIM with + when it reaches the target (in brackets: JPEG q${JPEG_QUALITY}'s SSIM at that width), encoding (flat/lossy).\n`);
  out(`   ${"sample".padEnd(38)} ${"class".padEnd(6)} ${"old KiB".padStart(8)} ${"SSIM".padStart(6)}  ${widths.map((w) => `WebP ${w}`.padEnd(37)).join("")}\n`);
  const sums = new Map<string, { old: number; new: Map<number, number>; short: Map<number, number>; n: number }>();
  for (const s of list) {
    const oldSsim = await ssimOf(s.ref, s.master);
    const cells: string[] = [];
    let cls: PageClass = "text";
    const group = sums.get(s.kind) ?? { old: 0, new: new Map(), short: new Map(), n: 0 };
    group.old += s.master.length;
    group.n++;
    for (const w of widths) {
      const ref = await resized(s.ref, w);
      const v = await variantOfMaster(s.master, w, "webp");
      cls = w >= 600 ? v.pageClass : cls;
      const target = w === PAGE_WIDTHS.read ? oldSsim : await ssimOf(ref, await sharp(ref.data, { raw: { width: ref.width, height: ref.height, channels: 3 } }).jpeg({ quality: JPEG_QUALITY }).toBuffer());
      const got = await ssimOf(ref, v.body);
      group.new.set(w, (group.new.get(w) ?? 0) + v.body.length);
      if (got < target) group.short.set(w, (group.short.get(w) ?? 0) + 1);
      cells.push(`${kib(v.body.length).padStart(6)} x${(v.body.length / s.master.length).toFixed(2)} ${got.toFixed(4)}${got >= target ? "+" : "-"} (${target.toFixed(4)}) ${v.encoding}`.padEnd(37));
    }
    sums.set(s.kind, group);
    out(`   ${s.label.padEnd(38)} ${cls.padEnd(6)} ${kib(s.master.length).padStart(8)} ${oldSsim.toFixed(4)}  ${cells.join("")}\n`);
  }
  out(`   bytes per kind of page, sum of WebP ÷ sum of old (and how many samples fall short of the target SSIM):\n`);
  const all = { old: 0, new: new Map<number, number>(), short: new Map<number, number>(), n: list.length };
  const line = (kind: string, g: typeof all) => {
    const target = TARGETS[kind];
    const cells = widths.map((w) => {
      const r = (g.new.get(w) ?? 0) / g.old;
      const mark = target === undefined ? "" : r <= target ? " ok" : " OVER";
      return `${w}: x${r.toFixed(2)}${mark}${g.short.get(w) ? ` (${g.short.get(w)} short)` : ""}`.padEnd(26);
    });
    out(`     ${kind.padEnd(6)} (${String(g.n).padStart(2)}) ${cells.join("")}${target === undefined ? "" : `target <= ${target}`}\n`);
  };
  for (const [kind, g] of sums) {
    all.old += g.old;
    for (const [w, b] of g.new) all.new.set(w, (all.new.get(w) ?? 0) + b);
    for (const [w, b] of g.short) all.short.set(w, (all.short.get(w) ?? 0) + b);
    line(kind, g);
  }
  line("all", all);
}

/**
 * The WebP quality of each class: the lowest that reaches, at 800 px (the width most views take),
 * the SSIM JPEG q90 reaches at 800 px, on every sample of the class. Printed beside PAGE_ENCODINGS.
 */
async function qualitySearch(list: Sample[]): Promise<void> {
  const width = 800;
  const found = new Map<PageClass, number>();
  const perSample: string[] = [];
  for (const s of list) {
    const ref = await resized(s.ref, width);
    const target = await ssimOf(ref, await sharp(ref.data, { raw: { width: ref.width, height: ref.height, channels: 3 } }).jpeg({ quality: JPEG_QUALITY }).toBuffer());
    const cls = (await variantOfMaster(s.master, width, "webp")).pageClass;
    let [lo, hi] = [30, 101];
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await ssimOf(ref, (await variantOfMaster(s.master, width, "webp", mid)).body)) >= target) hi = mid;
      else lo = mid + 1;
    }
    found.set(cls, Math.max(found.get(cls) ?? 0, lo));
    perSample.push(`${s.label} (${cls}) q${lo}`);
  }
  out(`\n2. WebP quality per class of page, the lowest reaching JPEG q${JPEG_QUALITY}'s SSIM at ${width} px on every sample of the class (101: none does):\n`);
  out(`     per sample: ${perSample.join("; ")}\n`);
  for (const c of Object.keys(PAGE_ENCODINGS) as PageClass[]) out(`     ${c.padEnd(7)} found q${found.get(c) ?? "- (no sample)"}, in the code (PAGE_ENCODINGS) q${PAGE_ENCODINGS[c].webpQuality}\n`);
}

/** Where the page step's processor time goes, and what the variants cost: one process, these pages. */
async function costTable(dir: string): Promise<void> {
  const first = 1;
  const last = 40;
  const pages = last - first + 1;
  out(`\n3. Processor time per page (${basename(BOOK)} pp.${first}-${last}; sandboxed converters by their process tree, bench/tree-cpu.py; sharp in this process):\n`);
  const tree = async (args: string[]) => {
    const file = join(dir, "cpu");
    await exec("python3", [new URL("./tree-cpu.py", import.meta.url).pathname, file, ...args]);
    return Number((await readFile(file, "utf8")).trim()) * 1000;
  };
  const scale = ["-cropbox", "-scale-to-x", String(PAGE_WIDTHS.read), "-scale-to-y", "-1", "-f", String(first), "-l", String(last), BOOK];
  const rows: Array<[string, number]> = [];
  rows.push(["drawing: pdftoppm, raw pixels (PPM) at 1200 px", await tree(["pdftoppm", ...scale, join(dir, "ppm")])]);
  rows.push([`drawing + JPEG q${JPEG_QUALITY}: pdftoppm -jpeg (the master)`, await tree(["pdftoppm", "-jpeg", "-jpegopt", `quality=${JPEG_QUALITY}`, ...scale, join(dir, "jpg")])]);
  rows.push(["drawing + JPEG q75: pdftoppm -jpeg (the baseline of 4.)", await tree(["pdftoppm", "-jpeg", ...scale, join(dir, "j75")])]);
  const stepCpu = cpuMs();
  await renderPages(BOOK, join(dir, "old-step"), { widths: PAGE_WIDTHS, limits: LIMITS, firstPage: first, lastPage: last });
  // This process only (poppler is a child): placing the masters, and making thumbnails as the step did before.
  rows.push(["step before, this process: masters placed, thumbnails made", cpuMs() - stepCpu]);
  const nowCpu = cpuMs();
  const made = await renderPages(BOOK, join(dir, "steps"), { widths: { read: PAGE_WIDTHS.read }, limits: LIMITS, firstPage: first, lastPage: last });
  rows.push(["step now, this process: masters placed (thumbnails are variants)", cpuMs() - nowCpu]);
  const masters = made.filter((p) => p.size === "read");
  const t = cpuMs();
  for (const p of masters) await sharp(p.path).resize({ width: PAGE_WIDTHS.thumb }).jpeg({ quality: JPEG_QUALITY }).toBuffer();
  rows.push(["thumbnails alone (sharp, from the master): the part of \"step before\" moved out", cpuMs() - t]);
  const c = cpuMs();
  await renderCovers(BOOK, join(dir, "covers"), LIMITS, masters[0]);
  rows.push(["covers, once per document (from page 1's master)", cpuMs() - c]);
  const bodies = await Promise.all(masters.map((p) => readFile(p.path)));
  for (const w of [...VARIANT_WIDTHS, PAGE_WIDTHS.thumb]) {
    const v = cpuMs();
    for (const m of bodies) await variantOfMaster(m, w, "webp");
    rows.push([`WebP variant ${w} px from the master (decode, resize, classify, encode)`, cpuMs() - v]);
  }
  for (const w of [PAGE_WIDTHS.read, 800]) {
    const v = cpuMs();
    for (const m of bodies) await variantOfMaster(m, w, "webp", PAGE_ENCODINGS.text.webpQuality);
    rows.push([`  the same ${w} px, lossy only (text class's quality: every text page before)`, cpuMs() - v]);
  }
  const j = cpuMs();
  for (const m of bodies) await variantOfMaster(m, 800, "jpeg");
  rows.push(["JPEG fallback 800 px from the master", cpuMs() - j]);
  for (const [label, ms] of rows) out(`     ${label.padEnd(72)} ${(label.startsWith("covers") ? ms : ms / pages).toFixed(1).padStart(7)} ms${label.startsWith("covers") ? " per document" : "/page"}\n`);
}

export async function benchPagesImages(opts: { step?: boolean } = {}): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "quire-bench-pages-"));
  try {
    out(`pages: the reader's page images (machine shared with other work: ratios are what to read)\n`);
    const list = await samples(dir);
    await formatsTable(list);
    await qualitySearch(list);
    await costTable(dir);
    if (opts.step !== false) {
      out(`\n4. The conversion's page step against plain pdftoppm, in the same run (bench/convert.ts section 1):`);
      await mkdir(join(dir, "step"));
      await benchPageStep(join(dir, "step"), { rounds: 2, formats: false });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await benchPagesImages({ step: !process.argv.includes("--no-step") });
