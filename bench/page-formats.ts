/**
 * Page image formats browsers read today (JPEG, WebP, AVIF, all through sharp) by bytes per page at
 * equal visual quality, and what encoding them costs in CPU. Part of `npm run bench -- convert`.
 *
 * Equal visual quality, as measured here: for each sample page, the SSIM (luma, over the windows with
 * content; image-quality.ts) that the shipped encoding (JPEG q90) reaches on it is the target; every
 * other format gets the lowest quality setting that reaches that target on every sample page. Bytes
 * and CPU are then measured at that setting over a set of pages from two documents.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import sharp, { type Sharp } from "sharp";
import { FIXTURES } from "./bench-common.ts";
import { luma, ssim, type Raw } from "./image-quality.ts";
import { ppmPages } from "./ppm-stream.ts";
import { JPEG_QUALITY } from "../src/convert/pdf-render.ts";
import { PAGE_WIDTHS } from "../src/domain/page-images.ts";

const BOOK = join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf");
const TCPDF = join(FIXTURES, "pdf-tcpdf-14pages.pdf");

interface Format {
  name: string;
  encode(img: Sharp, q: number): Sharp;
  /** The shipped setting: its quality is not searched for, it sets the target. */
  shipped?: boolean;
}

const FORMATS: Format[] = [
  { name: `JPEG (sharp defaults, as shipped)`, encode: (s, q) => s.jpeg({ quality: q }), shipped: true },
  { name: "JPEG (mozjpeg: trellis, progressive)", encode: (s, q) => s.jpeg({ quality: q, mozjpeg: true }) },
  { name: "WebP lossy (effort 4, default)", encode: (s, q) => s.webp({ quality: q }) },
  { name: "AVIF (effort 4, default)", encode: (s, q) => s.avif({ quality: q }) },
];

/** Pages as the pipeline rasterizes them: pdftoppm, raw pixels on stdout, the reading width. */
async function pages(pdf: string, first: number, last: number): Promise<Raw[]> {
  const child = spawn("pdftoppm", ["-cropbox", "-scale-to-x", String(PAGE_WIDTHS.read), "-scale-to-y", "-1", "-f", String(first), "-l", String(last), pdf], { stdio: ["ignore", "pipe", "ignore"] });
  const out: Raw[] = [];
  for await (const p of ppmPages(child.stdout, 50e6)) out.push({ data: p.pixels, width: p.width, height: p.height });
  return out;
}

function input(raw: Raw): Sharp {
  return sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } });
}

async function ssimOf(raw: Raw, ref: Float32Array, f: Format, q: number): Promise<number> {
  const back = await sharp(await f.encode(input(raw), q).toBuffer()).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return ssim(ref, luma({ data: back.data, width: back.info.width, height: back.info.height }), raw.width, raw.height);
}

/** The lowest quality 1..100 with SSIM >= target (SSIM grows with quality: a binary search). */
async function lowestQuality(raw: Raw, ref: Float32Array, f: Format, target: number): Promise<number> {
  let [lo, hi] = [1, 100];
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if ((await ssimOf(raw, ref, f, mid)) >= target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const out = (s: string): boolean => process.stdout.write(s);

export async function benchPageFormats(): Promise<void> {
  const samples = [
    { label: "body text (freeculture p.20)", raw: (await pages(BOOK, 20, 20))[0] },
    { label: "glyph table (tcpdf p.1)", raw: (await pages(TCPDF, 1, 1))[0] },
    { label: "picture (freeculture p.1, cover)", raw: (await pages(BOOK, 1, 1))[0] },
  ];
  const shipped = FORMATS.find((f) => f.shipped) as Format;
  const quality = new Map<Format, number>([[shipped, JPEG_QUALITY]]);
  out(`\n   Page formats at ${PAGE_WIDTHS.read} px, at equal visual quality: per sample page, the target is the SSIM the shipped JPEG q${JPEG_QUALITY}\n`);
  out(`   reaches (luma, windows with content); each format gets the lowest quality reaching it on every sample.\n`);
  out(`     ${"sample".padEnd(34)} ${FORMATS.map((f) => (f.shipped ? `JPEG q${JPEG_QUALITY} SSIM` : f.name.split(" ")[0] + " q")).map((h) => h.padStart(16)).join("")}\n`);
  for (const { label, raw } of samples) {
    if (!raw) throw new Error(`no pixels for ${label}`);
    const ref = luma(raw);
    const target = await ssimOf(raw, ref, shipped, JPEG_QUALITY);
    const cells = [target.toFixed(4)];
    for (const f of FORMATS.filter((g) => !g.shipped)) {
      const q = await lowestQuality(raw, ref, f, target);
      quality.set(f, Math.max(quality.get(f) ?? 0, q));
      cells.push(String(q));
    }
    out(`     ${label.padEnd(34)} ${cells.map((c) => c.padStart(16)).join("")}\n`);
  }
  const set = [...(await pages(BOOK, 1, 16)), ...(await pages(TCPDF, 1, 4))];
  out(`\n   Over ${set.length} pages (freeculture pp.1-16, tcpdf pp.1-4), each format at the quality above; CPU = this process's, per page encoded:\n`);
  let base = NaN;
  for (const f of FORMATS) {
    const q = quality.get(f) ?? 100;
    let bytes = 0;
    const cpu = cpuMs();
    for (const raw of set) bytes += (await f.encode(input(raw), q).toBuffer()).length;
    const ms = (cpuMs() - cpu) / set.length;
    const kib = bytes / 1024 / set.length;
    if (f.shipped) base = kib;
    out(`     ${f.name.padEnd(40)} q${String(q).padEnd(4)} ${kib.toFixed(1).padStart(7)} KiB/page  x${(kib / base).toFixed(2)}  ${ms.toFixed(1).padStart(6)} ms CPU/page\n`);
  }
}
