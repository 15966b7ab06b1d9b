import { open, readFile, stat } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import sharp, { type Sharp } from "sharp";
import { BmpError, decodeBmp } from "./bmp-decode.ts";
import { ConversionError } from "./conversion-error.ts";
import { writeImagePdf, type PdfImagePage } from "./image-pdf.ts";
import type { ImageType } from "../domain/formats.ts";
import { countOf } from "../domain/counts.ts";

/**
 * An image document (jpg, png, tif, gif, bmp, webp) as a PDF of one page per image: every frame
 * of a multi-page TIFF is a page; an animated GIF or WebP is its first frame (an animation is not
 * pages). EXIF orientation is applied, transparency laid on white, samples of any depth and
 * photometric interpretation (1-bit WhiteIsZero faxes, 16-bit scans) become 8-bit gray or RGB, and
 * the page takes the image's own resolution, so a 300 dpi A4 scan is an A4 page (pageDpi: what an
 * image without one gets, docs/images.md). The PDF then goes through the same steps as any PDF
 * (pages, covers, text, OCR), its OCR reading each image's own pixels (ocr-image.ts).
 */


export interface ImagePagesOptions {
  /** Largest pixel area of one image or frame (e.g. 50e6); beyond it the document fails with code 5. */
  maxPixels: number;
  /** Most frames a multi-page TIFF may have (QUIRE_MAX_PAGES is the natural value). */
  maxPages: number;
  /**
   * Largest pixel area of all its frames together (QUIRE_MAX_IMAGE_MEGAPIXELS); checked from the
   * frames' headers before any is decoded. Unset: maxPixels × maxPages, i.e. no bound of its own.
   */
  maxTotalPixels?: number;
  signal?: AbortSignal;
}

/** Below this an image's resolution is not taken as one (0, or a unit the writer got wrong). */
const MIN_USABLE_DPI = 10;
/** An image without a resolution is taken at a screen's… */
const SCREEN_DPI = 96;
/** …unless it is longer than a screen (a full-HD one is 1920 px wide): then it is a scan or a photo, taken at SCAN_DPI. */
const SCREEN_MAX_PIXELS = 2000;
const SCAN_DPI = 300;
/** A page's long side is kept between 1 in and Acrobat's limit of 200 in, by choosing the resolution. */
const MIN_PAGE_POINTS = 72;
const MAX_PAGE_POINTS = 14_400;
/** Kept as they are compressed: re-encoding as lossless would only make them bigger. */
const LOSSY: ReadonlySet<ImageType> = new Set(["jpg", "webp"]);

export async function imageToPdf(input: string, type: ImageType, output: string, opts: ImagePagesOptions): Promise<{ pageCount: number }> {
  try {
    const source = await openSource(input, type, opts);
    const meta = await source(0).metadata();
    // Only a TIFF's frames are pages; GIF and WebP frames are an animation.
    const frames = type === "tif" ? (meta.pages ?? 1) : 1;
    if (frames > opts.maxPages) throw limits(`The image has ${countOf(frames, "page")}; at most ${countOf(opts.maxPages, "page")} can be published.`);
    await checkTotalPixels(source, frames, meta, opts);
    async function* pages(): AsyncGenerator<PdfImagePage> {
      for (let page = 0; page < frames; page++) {
        opts.signal?.throwIfAborted();
        yield await renderPage(source(page), LOSSY.has(type));
      }
    }
    return { pageCount: await writeImagePdf(output, pages()) };
  } catch (err) {
    // Stopped from outside: the caller's reason, not a verdict on the image.
    if (opts.signal?.aborted) throw err;
    throw asConversionError(err);
  }
}

/** A factory of sharp pipelines, one per frame, all bounded by the pixel limit. */
async function openSource(input: string, type: ImageType, opts: ImagePagesOptions): Promise<(page: number) => Sharp> {
  const limit = { limitInputPixels: opts.maxPixels, failOn: "error" as const };
  if (type === "bmp") {
    // Raw pixels are 3-4 bytes each: a file far beyond that is not a bitmap we would accept anyway.
    if ((await stat(input)).size > opts.maxPixels * 4 + 1024 * 1024) throw limits("The image is too large.");
    const raw = decodeBmp(await readFile(input), opts.maxPixels);
    return () => sharp(raw.data, { ...limit, raw: { width: raw.width, height: raw.height, channels: raw.channels } });
  }
  if (type === "gif") {
    // libvips checks the GIF's screen size, but a frame may claim far more (a decompression bomb).
    const frame = await firstGifFrameSize(input);
    if (frame && frame.width * frame.height > opts.maxPixels) throw limits(`The image is ${frame.width} × ${frame.height} pixels, beyond the limit.`);
  }
  return (page) => sharp(input, { ...limit, page });
}

/**
 * The pixel area of every frame from its header alone (a TIFF's directory; other formats' one
 * frame is `first`), added up and refused past the bound before a single frame is decoded: a
 * 500 KB TIFF of ten blank 7000 × 7000 frames would otherwise hold a conversion for minutes.
 */
async function checkTotalPixels(source: (page: number) => Sharp, frames: number, first: { width?: number; height?: number }, opts: ImagePagesOptions): Promise<void> {
  const bound = opts.maxTotalPixels;
  if (bound === undefined) return;
  let total = 0;
  for (let page = 0; page < frames; page++) {
    opts.signal?.throwIfAborted();
    const { width = 0, height = 0 } = page === 0 ? first : await source(page).metadata();
    total += width * height;
    if (total > bound) {
      throw limits(`The image's ${frames > 1 ? "pages hold" : "page holds"} more than ${formatMegapixels(bound)} megapixels${frames > 1 ? " together" : ""}, beyond the limit.`);
    }
  }
}

function formatMegapixels(pixels: number): string {
  return String(Math.round(pixels / 1e5) / 10);
}

async function renderPage(pipeline: Sharp, lossy: boolean): Promise<PdfImagePage> {
  const meta = await pipeline.clone().metadata();
  const gray = meta.space === "b-w" || meta.space === "grey16" || (meta.channels ?? 3) <= 2;
  // rotate() with no angle applies the EXIF orientation.
  let image = pipeline.rotate().flatten({ background: "#ffffff" }).removeAlpha().toColourspace(gray ? "b-w" : "srgb");
  image = lossy ? image.jpeg({ quality: 90, chromaSubsampling: "4:4:4" }) : image.raw();
  const { data, info } = await image.toBuffer({ resolveWithObject: true });
  const dpi = pageDpi(info.width, info.height, meta.density);
  return {
    widthPt: (info.width * 72) / dpi,
    heightPt: (info.height * 72) / dpi,
    image: {
      width: info.width,
      height: info.height,
      colorSpace: info.channels === 1 ? "DeviceGray" : "DeviceRGB",
      filter: lossy ? "DCTDecode" : "FlateDecode",
      data: lossy ? data : deflateSync(data),
    },
  };
}

/**
 * The resolution an image is laid on its page at: its own when it has a usable one; without, 96
 * dpi for an image no longer than 2000 px (a screenshot, a web picture), else 300 dpi (a scan or
 * a photo: an A4 page scanned at 300 dpi is 2480 × 3508 pixels); then raised or lowered so that the long
 * side is between 1 in and 200 in (a 1 × 1 pixel image is a 1 in page: at 0.75 pt, pdftoppm
 * refused to render it).
 */
export function pageDpi(width: number, height: number, density: number | undefined): number {
  const long = Math.max(width, height, 1);
  const own = density !== undefined && Number.isFinite(density) && density >= MIN_USABLE_DPI ? density : undefined;
  const dpi = own ?? (long > SCREEN_MAX_PIXELS ? SCAN_DPI : SCREEN_DPI);
  return Math.max(Math.min(dpi, (long * 72) / MIN_PAGE_POINTS), (long * 72) / MAX_PAGE_POINTS);
}

/** The first image descriptor's size, skipping the colour table and extension blocks; null if none is found early. */
async function firstGifFrameSize(path: string): Promise<{ width: number; height: number } | null> {
  const file = await open(path, "r");
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    const gif = buffer.subarray(0, bytesRead);
    const flags = gif[10] ?? 0;
    let at = 13 + (flags & 0x80 ? 3 * (2 << (flags & 7)) : 0);
    while (at < gif.length) {
      const block = gif[at];
      // A frame placed at an offset makes the decoder allocate the canvas out to its far corner.
      if (block === 0x2c) return at + 9 <= gif.length ? { width: gif.readUInt16LE(at + 1) + gif.readUInt16LE(at + 5), height: gif.readUInt16LE(at + 3) + gif.readUInt16LE(at + 7) } : null;
      if (block !== 0x21) return null;
      at += 2; // introducer and label, then sub-blocks until an empty one
      while (at < gif.length && gif[at] !== 0) at += (gif[at] ?? 0) + 1;
      at++;
    }
    return null;
  } finally {
    await file.close();
  }
}

function limits(message: string): ConversionError {
  return new ConversionError("limits", message);
}

function asConversionError(err: unknown): unknown {
  if (err instanceof ConversionError) return err;
  if (err instanceof BmpError) {
    return err.reason === "limits"
      ? limits("The image is larger than the pixel limit.")
      : new ConversionError("corrupt", "The image could not be read; it may be damaged or of an unsupported kind.", { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/pixel limit/i.test(message)) return new ConversionError("limits", "The image is larger than the pixel limit.", { cause: err });
  if (err instanceof Error && "code" in err && typeof err.code === "string" && err.code.startsWith("E")) {
    return new ConversionError("internal", "The image could not be converted.", { cause: err, transient: true });
  }
  return new ConversionError("corrupt", "The image could not be read; it may be damaged.", { cause: err });
}
