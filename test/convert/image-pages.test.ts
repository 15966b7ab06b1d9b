import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { BmpError, decodeBmp } from "../../src/convert/bmp-decode.ts";
import { ConversionError } from "../../src/convert/conversion-error.ts";
import { imageToPdf, pageDpi } from "../../src/convert/image-pages.ts";
import type { ImageType } from "../../src/domain/formats.ts";
import { detectFormat } from "../../src/detect/detect-format.ts";
import { withTempDir } from "../helpers/detect-cases.ts";
import { FIXTURES } from "../helpers/paths.ts";

const LIMITS = { maxPixels: 50e6, maxPages: 2000 };

function pdfInfo(path: string): { pages: number; width: number; height: number } {
  const info = execFileSync("pdfinfo", [path], { encoding: "utf8" });
  const size = /Page size:\s+([\d.]+) x ([\d.]+) pts/.exec(info);
  return { pages: Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]), width: Number(size?.[1]), height: Number(size?.[2]) };
}

/** Page 1 rendered by poppler, as raw RGB pixels: proves the PDF is readable, and shows what it holds. */
async function renderFirstPage(pdf: string, dir: string): Promise<{ data: Buffer; width: number; height: number }> {
  execFileSync("pdftoppm", ["-r", "72", "-f", "1", "-l", "1", "-png", "-singlefile", pdf, join(dir, "page")]);
  const { data, info } = await sharp(join(dir, "page.png")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

async function rejectsWithKind(p: Promise<unknown>, kind: string): Promise<void> {
  const err = await p.then(() => assert.fail("conversion should have failed"), (e: unknown) => e);
  assert.ok(err instanceof ConversionError, `expected a ConversionError, got ${String(err)}`);
  assert.equal(err.kind, kind, err.message);
  assert.ok(err.message.length > 0);
}

/** "Pages (observed)" of each image in the MANIFEST is its number of frames. */
async function manifestPages(): Promise<Map<string, number>> {
  const pages = new Map<string, number>();
  for (const m of (await readFile(join(FIXTURES, "MANIFEST.md"), "utf8")).matchAll(/^\| `([^`]+)` \| \w+ \|[^|]*\|[^|]*\| \d+ \| (\d+) \|/gm)) {
    if (!pages.has(m[1]!)) pages.set(m[1]!, Number(m[2]));
  }
  return pages;
}

test("every image fixture becomes a PDF of one page per image or TIFF frame", async () => {
  const pages = await manifestPages();
  const names = (await readdir(FIXTURES)).filter((f) => /\.(jpg|png|tiff?|gif|bmp|webp)$/.test(f));
  assert.ok(names.length >= 14, "image fixtures missing");
  await withTempDir(async (dir) => {
    for (const name of [...names, "bad/scan-page.png"]) {
      const type = (await detectFormat(join(FIXTURES, name))) as ImageType;
      const pdf = join(dir, `${name.replace("/", "_")}.pdf`);
      const result = await imageToPdf(join(FIXTURES, name), type, pdf, LIMITS);
      const want = pages.get(name) ?? pages.get(name.replace("bad/", "")) ?? 1;
      assert.equal(result.pageCount, want, name);
      assert.equal(pdfInfo(pdf).pages, want, `${name}: poppler reads the PDF`);
      const page = await renderFirstPage(pdf, dir);
      assert.ok(page.width > 0 && page.height > 0, name);
    }
  });
});

test("the page takes the image's resolution: a 300 dpi scan is its real size", async () => {
  await withTempDir(async (dir) => {
    const pdf = join(dir, "eurotext.pdf");
    await imageToPdf(join(FIXTURES, "ocr-eurotext-6languages-tesseract.tif"), "tif", pdf, LIMITS);
    // 1024 × 800 pixels at 300 dpi.
    assert.deepEqual(pdfInfo(pdf), { pages: 1, width: 245.76, height: 192 });
    // 413 × 584 at 50 dpi: an A4 page.
    await imageToPdf(join(FIXTURES, "tif-multipage-2pages-alfresco.tiff"), "tif", pdf, LIMITS);
    assert.deepEqual(pdfInfo(pdf), { pages: 2, width: 594.72, height: 840.96 });
  });
});

test("an image without a resolution: 96 dpi up to 2000 px long, else 300 dpi; the long side between 1 in and 200 in", async () => {
  const inches = (w: number, h: number, density?: number) => {
    const dpi = pageDpi(w, h, density);
    return [Math.round((w / dpi) * 100) / 100, Math.round((h / dpi) * 100) / 100];
  };
  assert.deepEqual(inches(1920, 1080), [1920 / 96, 11.25], "a full-HD screenshot at 96 dpi");
  assert.deepEqual(inches(2560, 1440), [8.53, 4.8], "longer than 2000 px: a scan or a photo, at 300 dpi");
  assert.deepEqual(inches(2480, 3508), [8.27, 11.69], "an A4 scan without a resolution is A4");
  assert.deepEqual(inches(409, 92), [4.26, 0.96], "the small scan of issue 27");
  assert.deepEqual(inches(1, 1), [1, 1], "1 × 1 pixel: a 1 in page, not 0.75 pt");
  assert.deepEqual(inches(3, 2), [1, 0.67]);
  assert.deepEqual(inches(20000, 20), [66.67, 0.07], "a 20000 × 20 strip, at 300 dpi");
  assert.deepEqual(inches(80000, 20, 100), [200, 0.05], "200 in long at most, Acrobat's limit");
  assert.deepEqual(inches(640, 480, 200), [3.2, 2.4], "a resolution of its own is kept");
  assert.deepEqual(inches(640, 480, 5), [6.67, 5], "below 10 dpi it is not one");
  assert.deepEqual(inches(100, 100, 100_000), [1, 1], "nor does it make a page smaller than 1 in");
});

test("a small image enlarged to the reading size is smoothed, not drawn in blocks", async () => {
  await withTempDir(async (dir) => {
    // A 100 × 68 left-to-right grey ramp (the size of the photo fixture), at the reading width.
    const ramp = Buffer.alloc(100 * 68);
    for (let y = 0; y < 68; y++) for (let x = 0; x < 100; x++) ramp[y * 100 + x] = Math.round((x * 255) / 99);
    const input = join(dir, "ramp.png");
    await sharp(ramp, { raw: { width: 100, height: 68, channels: 1 } }).png().toFile(input);
    await imageToPdf(input, "png", join(dir, "ramp.pdf"), LIMITS);
    execFileSync("pdftoppm", ["-scale-to-x", "1200", "-scale-to-y", "-1", "-png", "-gray", "-singlefile", join(dir, "ramp.pdf"), join(dir, "big")]);
    const { data, info } = await sharp(join(dir, "big.png")).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    const row = data.subarray(Math.floor(info.height / 2) * info.width, Math.floor(info.height / 2 + 1) * info.width);
    // Drawn in blocks, the row holds the ramp's 100 values, each 12 pixels wide: 99 changes of
    // value. Smoothed, it passes through the grey levels between them (at most 255 changes).
    const steps = row.reduce((n, v, i) => (i > 0 && v !== row[i - 1] ? n + 1 : n), 0);
    assert.ok(steps > 200, `${steps} changes of value along 1,200 pixels`);
  });
});

test("1-bit WhiteIsZero and 16-bit images become white pages with black text", async () => {
  await withTempDir(async (dir) => {
    const photo = join(FIXTURES, "ocr-phototest-tesseract.tif");
    const fax = join(dir, "fax.tif");
    await sharp(photo).toColourspace("b-w").extractChannel(0).tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true }).toFile(fax);
    const { data, info } = await sharp(photo).toColourspace("b-w").raw().toBuffer({ resolveWithObject: true });
    const deep = join(dir, "deep.png");
    await sharp(Uint16Array.from(data, (v) => v * 257), { raw: { width: info.width, height: info.height, channels: 1 } }).toColourspace("grey16").png().toFile(deep);
    for (const [path, type] of [[fax, "tif"], [deep, "png"]] as const) {
      const pdf = join(dir, `${type}.pdf`);
      await imageToPdf(path, type, pdf, LIMITS);
      const page = await renderFirstPage(pdf, dir);
      const mean = page.data.reduce((sum, v) => sum + v, 0) / page.data.length;
      const dark = page.data.filter((v) => v < 128).length / page.data.length;
      assert.ok(mean > 200 && dark > 0.01 && dark < 0.2, `${type}: white paper, some black ink (mean ${mean}, dark share ${dark})`);
    }
  });
});

test("EXIF orientation is applied, and transparency is laid on white", async () => {
  await withTempDir(async (dir) => {
    // 60 wide, 20 tall as stored; orientation 6 says "rotate 90° clockwise to view": 20 wide, 60 tall.
    const stored = await sharp({ create: { width: 60, height: 20, channels: 3, background: "#204080" } }).jpeg().withMetadata({ orientation: 6, density: 72 }).toBuffer();
    await writeFile(join(dir, "rotated.jpg"), stored);
    await imageToPdf(join(dir, "rotated.jpg"), "jpg", join(dir, "rotated.pdf"), LIMITS);
    const info = pdfInfo(join(dir, "rotated.pdf"));
    assert.ok(info.height > info.width, `portrait after orientation: ${JSON.stringify(info)}`);

    const clear = await sharp({ create: { width: 20, height: 20, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    await writeFile(join(dir, "clear.png"), clear);
    await imageToPdf(join(dir, "clear.png"), "png", join(dir, "clear.pdf"), LIMITS);
    const page = await renderFirstPage(join(dir, "clear.pdf"), dir);
    assert.ok(page.data.every((v) => v > 250), "a transparent image is white, not black");
  });
});

test("limits and damage: pixel limit, frame count, decompression bomb, truncated data", async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, "out.pdf");
    await rejectsWithKind(imageToPdf(join(FIXTURES, "img-photo-tika.png"), "png", out, { ...LIMITS, maxPixels: 1000 }), "limits");
    await rejectsWithKind(imageToPdf(join(FIXTURES, "img-photo-tika.bmp"), "bmp", out, { ...LIMITS, maxPixels: 1000 }), "limits");
    await rejectsWithKind(imageToPdf(join(FIXTURES, "tif-multipage-2pages-tika.tif"), "tif", out, { ...LIMITS, maxPages: 1 }), "limits");
    await rejectsWithKind(imageToPdf(join(FIXTURES, "bad/gif-decompression-bomb-pillow.gif"), "gif", out, LIMITS), "limits");
    await rejectsWithKind(imageToPdf(join(FIXTURES, "bad/jpg-truncated-pillow.jpg"), "jpg", out, LIMITS), "corrupt");
    await writeFile(join(dir, "cut.png"), (await readFile(join(FIXTURES, "img-photo-tika.png"))).subarray(0, 200));
    await rejectsWithKind(imageToPdf(join(dir, "cut.png"), "png", out, LIMITS), "corrupt");
  });
});

test("the frames' pixels together are bounded, from their headers: a TIFF over the bound fails with 'limits'", async () => {
  await withTempDir(async (dir) => {
    const tiff = join(dir, "frames.tif");
    // Five 1000 × 1000 frames: 5 megapixels together.
    const frame = await sharp({ create: { width: 1000, height: 1000, channels: 3, background: "#ffffff" } }).png().toBuffer();
    await writeFile(tiff, await sharp(Array<Buffer>(5).fill(frame), { join: { animated: true } }).tiff({ compression: "lzw" }).toBuffer());
    assert.equal((await sharp(tiff).metadata()).pages, 5);
    const out = join(dir, "out.pdf");
    await rejectsWithKind(imageToPdf(tiff, "tif", out, { ...LIMITS, maxTotalPixels: 4_999_999 }), "limits");
    assert.equal((await imageToPdf(tiff, "tif", out, { ...LIMITS, maxTotalPixels: 5_000_000 })).pageCount, 5);
    // One frame alone is bounded too.
    await rejectsWithKind(imageToPdf(join(FIXTURES, "img-photo-tika.png"), "png", out, { ...LIMITS, maxTotalPixels: 1000 }), "limits");
  });
});

test("an aborted conversion rejects with the caller's reason", async () => {
  await withTempDir(async (dir) => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    const err = await imageToPdf(join(FIXTURES, "tif-multipage-2pages-tika.tif"), "tif", join(dir, "out.pdf"), { ...LIMITS, signal: controller.signal }).catch((e: unknown) => e);
    assert.equal((err as Error).message, "stop");
  });
});

// --- BMP decoding (libvips as sharp ships it has no BMP loader) ---

/** A BMP with a 40-byte header (or `headerSize`), the given pixel rows as stored, and extra bytes before them. */
function bmp(opts: { width: number; height: number; bpp: number; compression?: number; extra?: Buffer; rows: Buffer; headerSize?: number; colours?: number }): Buffer {
  const headerSize = opts.headerSize ?? 40;
  const extra = opts.extra ?? Buffer.alloc(0);
  const offset = 14 + headerSize + extra.length;
  const head = Buffer.alloc(14 + headerSize);
  head.write("BM", 0, "latin1");
  head.writeUInt32LE(offset + opts.rows.length, 2);
  head.writeUInt32LE(offset, 10);
  head.writeUInt32LE(headerSize, 14);
  head.writeInt32LE(opts.width, 18);
  head.writeInt32LE(opts.height, 22);
  head.writeUInt16LE(1, 26);
  head.writeUInt16LE(opts.bpp, 28);
  head.writeUInt32LE(opts.compression ?? 0, 30);
  head.writeUInt32LE(opts.colours ?? 0, 46);
  return Buffer.concat([head, extra, opts.rows]);
}

test("BMP: 24-bit bottom-up and top-down, palettes, 32-bit bit fields with alpha", () => {
  // Rows are padded to 4 bytes; bottom-up stores the last row first. Pixels: red, green / blue, white.
  const bgr = (r: number, g: number, b: number) => [b, g, r];
  const rowTop = [...bgr(255, 0, 0), ...bgr(0, 255, 0), 0, 0];
  const rowBottom = [...bgr(0, 0, 255), ...bgr(255, 255, 255), 0, 0];
  const expected = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]);
  const bottomUp = decodeBmp(bmp({ width: 2, height: 2, bpp: 24, rows: Buffer.from([...rowBottom, ...rowTop]) }), 100);
  assert.deepEqual({ ...bottomUp, data: [...bottomUp.data] }, { width: 2, height: 2, channels: 3, data: [...expected] });
  const topDown = decodeBmp(bmp({ width: 2, height: -2, bpp: 24, rows: Buffer.from([...rowTop, ...rowBottom]) }), 100);
  assert.deepEqual([...topDown.data], [...expected]);

  // 8-bit palette: indexes 0..3 name the same four colours.
  const palette = Buffer.from([0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0]);
  const indexed = decodeBmp(bmp({ width: 2, height: 2, bpp: 8, extra: palette, colours: 4, rows: Buffer.from([2, 3, 0, 0, 0, 1, 0, 0]) }), 100);
  assert.deepEqual([...indexed.data], [...expected]);
  // 1-bit: a black and a white pixel per row (palette black, white).
  const mono = decodeBmp(bmp({ width: 2, height: 1, bpp: 1, extra: Buffer.from([0, 0, 0, 0, 255, 255, 255, 0]), rows: Buffer.from([0b01000000, 0, 0, 0]) }), 100);
  assert.deepEqual([...mono.data], [0, 0, 0, 255, 255, 255]);

  // 32-bit BI_BITFIELDS with an alpha mask (V5-style header of 124 bytes carries the masks).
  const masks = Buffer.alloc(124 - 40);
  [0x00ff0000, 0x0000ff00, 0x000000ff, 0xff000000].forEach((m, i) => masks.writeUInt32LE(m >>> 0, i * 4));
  const pixel = Buffer.alloc(4);
  pixel.writeUInt32LE(0x80102030, 0);
  const head = bmp({ width: 1, height: 1, bpp: 32, compression: 3, rows: pixel, headerSize: 124 });
  masks.copy(head, 14 + 40);
  const rgba = decodeBmp(head, 100);
  assert.deepEqual({ channels: rgba.channels, data: [...rgba.data] }, { channels: 4, data: [0x10, 0x20, 0x30, 0x80] });
});

test("BMP: compressed, cut short, forged or too large bitmaps are refused with a reason", () => {
  const reason = (file: Buffer, maxPixels = 100): string => {
    try {
      decodeBmp(file, maxPixels);
      return "decoded";
    } catch (e) {
      assert.ok(e instanceof BmpError);
      return e.reason;
    }
  };
  const rows = Buffer.alloc(16);
  assert.equal(reason(bmp({ width: 2, height: 2, bpp: 8, compression: 1, rows })), "unsupported"); // RLE8
  assert.equal(reason(bmp({ width: 2, height: 2, bpp: 24, rows: Buffer.alloc(8) })), "corrupt"); // pixel data cut short
  assert.equal(reason(bmp({ width: 0, height: 2, bpp: 24, rows })), "corrupt");
  assert.equal(reason(bmp({ width: 2, height: 2, bpp: 7, rows })), "unsupported");
  assert.equal(reason(bmp({ width: 100_000, height: 100_000, bpp: 24, rows })), "limits");
  assert.equal(reason(Buffer.from("BM")), "corrupt");
});
