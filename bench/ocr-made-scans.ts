/**
 * Scans of the kinds Tesseract reads badly out of the box (issue 27), made in the bench from the
 * shared fixtures whose true text is known: small images (strips of a few lines at their own
 * pixels, under 150 px tall, no resolution in a 24-bit BMP, as a cropped label or a line of a form
 * is), 1-bit CCITT G4 fax TIFFs (WhiteIsZero, at fax resolutions, several pages), and 16-bit
 * scans (greyscale PNG, RGB TIFF). Each case's truth is the fixture's `.gt.txt`, cut to what the
 * image shows.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import sharp, { type Sharp } from "sharp";
import { FIXTURES } from "./bench-common.ts";

export interface MadeScan {
  /** The row's name in the bench. */
  name: string;
  /** Its files (each read on its own by both sides), and the true text of each. */
  files: { path: string; truth: string }[];
}

interface Page {
  /** Greyscale pixels, one byte each. */
  data: Buffer;
  width: number;
  height: number;
  dpi: number;
  lines: string[];
}

async function page(fixture: string): Promise<Page> {
  const path = join(FIXTURES, fixture);
  const { data, info } = await sharp(path).flatten({ background: "#ffffff" }).toColourspace("b-w").raw().toBuffer({ resolveWithObject: true });
  const meta = await sharp(path).metadata();
  const lines = (await readFile(`${path}.gt.txt`, "utf8")).split("\n").filter((l) => l.trim() !== "");
  return { data, width: info.width, height: info.height, dpi: meta.density ?? 300, lines };
}

/**
 * The rows of each text line: runs of rows with ink, one per line of the truth. The least ink a
 * row needs is the smallest that parts the page into exactly that many lines (close lines touch
 * through their descenders).
 */
function lineBands(p: Page): { top: number; bottom: number }[] {
  const ink: number[] = [];
  for (let y = 0; y < p.height; y++) {
    let dark = 0;
    for (let x = 0; x < p.width; x++) if ((p.data[y * p.width + x] ?? 255) < 128) dark++;
    ink.push(dark);
  }
  for (const least of [1, 3, 6, 10, 20]) {
    const bands: { top: number; bottom: number }[] = [];
    for (let y = 0; y < p.height; y++) {
      if ((ink[y] ?? 0) <= least) continue;
      const last = bands.at(-1);
      if (last && y - last.bottom <= 1) last.bottom = y;
      else bands.push({ top: y, bottom: y });
    }
    const lines = bands.filter((b) => b.bottom - b.top >= 4);
    if (lines.length === p.lines.length) return lines;
  }
  throw new Error(`no parting of the page into the truth's ${p.lines.length} lines`);
}

/** Lines `from`..`to` (0-based, inclusive) with a margin that stops halfway to the next lines, at the page's own pixels. */
function strip(p: Page, bands: { top: number; bottom: number }[], from: number, to: number): { image: Sharp; truth: string } {
  const margin = Math.round(p.dpi / 25);
  const first = bands[from] as { top: number; bottom: number };
  const last = bands[to] as { top: number; bottom: number };
  const above = bands[from - 1];
  const below = bands[to + 1];
  const top = Math.max(0, first.top - margin, above ? Math.ceil((above.bottom + first.top) / 2) : 0);
  const bottom = Math.min(p.height - 1, last.bottom + margin, below ? Math.floor((last.bottom + below.top) / 2) : p.height - 1);
  const image = sharp(p.data, { raw: { width: p.width, height: p.height, channels: 1 } }).extract({ left: 0, top, width: p.width, height: bottom - top + 1 });
  return { image, truth: p.lines.slice(from, to + 1).join("\n") };
}

/** A 24-bit bottom-up BI_RGB BMP with no resolution (0 pixels per metre), as many programs write. */
async function writeBmp(path: string, image: Sharp): Promise<void> {
  const { data, info } = await image.toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
  const stride = Math.ceil((info.width * 3) / 4) * 4;
  const out = Buffer.alloc(54 + stride * info.height);
  out.write("BM", 0, "latin1");
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(54, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(info.width, 18);
  out.writeInt32LE(info.height, 22);
  out.writeUInt16LE(1, 26);
  out.writeUInt16LE(24, 28);
  out.writeUInt32LE(stride * info.height, 34);
  for (let y = 0; y < info.height; y++) {
    const row = 54 + (info.height - 1 - y) * stride;
    for (let x = 0; x < info.width; x++) {
      const at = (y * info.width + x) * info.channels;
      out[row + x * 3] = data[at + 2] as number;
      out[row + x * 3 + 1] = data[at + 1] as number;
      out[row + x * 3 + 2] = data[at] as number;
    }
  }
  await writeFile(path, out);
}

/** The page scaled to `dpi`, as a fax machine or a low-resolution scanner would have taken it. */
function scaled(p: Page, dpi: number): Sharp {
  return sharp(p.data, { raw: { width: p.width, height: p.height, channels: 1 } }).resize({ width: Math.round((p.width * dpi) / p.dpi), kernel: "lanczos3" });
}

export async function makeScans(dir: string): Promise<MadeScan[]> {
  const photo = await page("ocr-phototest-tesseract.tif");
  const euro = await page("ocr-eurotext-6languages-tesseract.tif");
  const cases: MadeScan[] = [];

  // Small: strips of one to three lines at their own pixels (200 and 300 dpi), and the same at
  // half size, as 24-bit BMPs without a resolution.
  for (const [label, scale] of [["own pixels", 1], ["half size", 0.5], ["a third", 0.33]] as const) {
    const files: MadeScan["files"] = [];
    for (const [p, name] of [[photo, "phototest"], [euro, "eurotext"]] as const) {
      const bands = lineBands(p);
      const groups = name === "phototest" ? [[0, 1], [2, 2], [3, 4], [5, 7]] : [[0, 1], [2, 2], [4, 5], [9, 10]];
      for (const [from, to] of groups) {
        const s = strip(p, bands, from as number, to as number);
        const meta = await s.image.clone().raw().toBuffer({ resolveWithObject: true });
        const image = scale === 1 ? s.image : sharp(meta.data, { raw: { width: meta.info.width, height: meta.info.height, channels: meta.info.channels } }).resize({ width: Math.round(meta.info.width * scale), kernel: "lanczos3" });
        const path = join(dir, `small-${name}-${from}-${to}-${scale}.bmp`);
        await writeBmp(path, image);
        const { height } = await sharp(await image.clone().png().toBuffer()).metadata();
        if ((height ?? 0) >= 150) throw new Error(`${path} is ${height} px tall`);
        files.push({ path, truth: s.truth });
      }
    }
    cases.push({ name: `small strips, ${label} (BMP, no dpi, < 150 px tall)`, files });
  }

  // 1-bit fax: both pages at 100 dpi (the held-out fax was 344 × 287 a page) and at 200 dpi
  // (fax "fine"), thresholded, G4, WhiteIsZero, one three-page TIFF each (phototest twice).
  for (const dpi of [72, 100, 200]) {
    const pages = [photo, euro, photo].map((p) => ({ p, width: Math.round((p.width * dpi) / p.dpi), height: Math.round((p.height * dpi) / p.dpi) }));
    // A fax's pages share one width; each is laid on white to the largest size.
    const width = Math.max(...pages.map((x) => x.width));
    const height = Math.max(...pages.map((x) => x.height));
    const frames: Buffer[] = [];
    for (const { p, width: w, height: h } of pages) {
      const { data, info } = await scaled(p, dpi).threshold(160).toColourspace("b-w").raw().toBuffer({ resolveWithObject: true });
      frames.push(
        await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
          .extend({ right: width - w, bottom: height - h, background: "#ffffff" })
          .png()
          .toBuffer(),
      );
    }
    const path = join(dir, `fax-${dpi}dpi.tif`);
    await sharp(frames, { join: { animated: true } })
      .extractChannel(0)
      .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, xres: dpi / 25.4, yres: dpi / 25.4 })
      .toFile(path);
    cases.push({ name: `fax: 1-bit G4 WhiteIsZero TIFF, 3 pages at ${dpi} dpi`, files: [{ path, truth: pages.map(({ p }) => p.lines.join("\n")).join("\f") }] });
  }

  // 16-bit: greyscale PNGs (with and without a resolution) and an RGB TIFF, at the pages' own pixels.
  const deep: MadeScan["files"] = [];
  for (const [p, name] of [[photo, "phototest"], [euro, "eurotext"]] as const) {
    // 16-bit samples (v × 257: full range), as a scanner writes them; a TypedArray input is ushort to sharp.
    const wide = Uint16Array.from(p.data, (v) => v * 257);
    const grey = () => sharp(wide, { raw: { width: p.width, height: p.height, channels: 1 } });
    const png16 = join(dir, `deep-${name}-grey16.png`);
    await grey().toColourspace("grey16").withMetadata({ density: p.dpi }).png().toFile(png16);
    const png16bare = join(dir, `deep-${name}-grey16-nodpi.png`);
    await grey().toColourspace("grey16").png().toFile(png16bare);
    const tif16 = join(dir, `deep-${name}-rgb16.tif`);
    await grey().toColourspace("rgb16").withMetadata({ density: p.dpi }).tiff({ compression: "lzw" }).toFile(tif16);
    for (const path of [png16, png16bare, tif16]) {
      const meta = await sharp(path).metadata();
      if (meta.depth !== "ushort") throw new Error(`${path} is not 16-bit`);
      deep.push({ path, truth: p.lines.join("\n") });
    }
  }
  cases.push({ name: "16-bit: grey PNG (dpi / none), RGB TIFF", files: deep });

  // Colour: a noisy RGB scan in an LZW TIFF, and a lossless WebP whose paper is transparent.
  const colour: MadeScan["files"] = [];
  for (const [p, name] of [[photo, "phototest"], [euro, "eurotext"]] as const) {
    let seed = 27;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const rgb = Buffer.alloc(p.width * p.height * 3);
    for (let i = 0; i < p.width * p.height; i++) {
      // Paper a little yellow, ink a little blue, each sample with noise of about ±24.
      const v = p.data[i] ?? 255;
      const tint = [v, v, Math.max(0, v - 30)];
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.max(0, Math.min(255, Math.round((tint[c] ?? v) + (random() + random() + random() - 1.5) * 32)));
    }
    const tif = join(dir, `colour-${name}-noisy.tif`);
    await sharp(rgb, { raw: { width: p.width, height: p.height, channels: 3 } }).withMetadata({ density: p.dpi }).tiff({ compression: "lzw" }).toFile(tif);
    const rgba = Buffer.alloc(p.width * p.height * 4);
    for (let i = 0; i < p.width * p.height; i++) rgba[i * 4 + 3] = 255 - (p.data[i] ?? 255); // black ink, paper fully transparent
    const webp = join(dir, `colour-${name}-alpha.webp`);
    await sharp(rgba, { raw: { width: p.width, height: p.height, channels: 4 } }).webp({ lossless: true }).toFile(webp);
    for (const path of [tif, webp]) colour.push({ path, truth: p.lines.join("\n") });
  }
  cases.push({ name: "colour: noisy RGB LZW TIFF, WebP lossless with alpha", files: colour });
  return cases;
}
