/**
 * OCR of page images with Tesseract, upright first: the words and their boxes come out in the shape
 * of `PageText`, so a scanned page joins the reader's text layer, search and the description like
 * extracted text. Orientation (Tesseract's OSD, as OCRmyPDF uses it) costs about half a recognition,
 * so it only runs when the first reading looks sideways or unsure; a turn is kept only when the
 * turned page reads at least as well. A page of low resolution, or whose text is small in pixels
 * (a fax, a small scan), is read again enlarged, smoothly, as OCRmyPDF oversamples low-resolution
 * pages, and the clearly better reading is kept. Why: bench/ocr.ts (`npm run bench -- ocr`) and
 * docs/images.md.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import sharp from "sharp";
import { ConversionError } from "./conversion-error.ts";
import { renderPdfPageForOcr, OCR_DPI, OCR_MAX_PIXELS, type OcrImage } from "./ocr-image.ts";
import { parseOsd, parseTsv, runTesseract, tsvToWords, type TsvPage } from "./ocr-tesseract.ts";
import type { SandboxSettings } from "./sandbox.ts";
import type { PageSize } from "./pdf-inspect.ts";
import type { PageText, Word } from "./pdf-text.ts";
import { countOf } from "../domain/counts.ts";

export interface OcrOptions {
  /** Tesseract language names, e.g. ["eng", "deu"] (see ocrLanguages). */
  languages: readonly string[];
  /** Wall-clock limit for each tesseract run; over it the page fails with "limits". */
  timeoutMs: number;
  /** Where tesseract and poppler run (the worker's settings, sandbox.ts). */
  sandbox: SandboxSettings;
  signal?: AbortSignal;
  /** Where turned copies of an image are written (removed before returning). */
  tmpDir?: string;
}

export interface OcrResult {
  /** Words joined by spaces, lines by "\n". */
  text: string;
  /** Boxes as fractions of the upright page: the image turned clockwise by `rotation`. */
  words: Word[];
  /** Degrees the image was turned clockwise to read it (0, 90, 180, 270): the page shows best so. */
  rotation: number;
}

/** Below this confidence (mean over letters) a reading may be of a page upside down. */
const UNSURE_CONFIDENCE = 60;
/** A reading where most words are taller than wide is of lines running up or down the page. */
const SIDEWAYS_SHARE = 0.5;
/**
 * OSD's confidence needed to try a turn. Lower than OCRmyPDF's default (a ratio of 14), which
 * phototest and the FAA page turned 90/180° do not reach (9-12): the turn is judged by the re-reading instead.
 */
const MIN_OSD_CONFIDENCE = 2;

/**
 * Pages whose words are shorter than this (median height in pixels, of words with two letters or
 * more) are read again enlarged: Tesseract read the 8 to 10 px words of a 72 dpi fax and of small
 * strips of scans with 6% and 21% of characters wrong, enlarged 1.5 or 2 times 2.5% and 3%; from
 * 11 px on (a 100 dpi fax) enlarging gained nothing and sometimes lost (bench/ocr.ts, "fax" and
 * "small strips" rows).
 */
const SMALL_TEXT_PX = 11;
/** The enlargements tried for small text (which is best differs from page to page: each is read, the best reading kept). */
const OVERSAMPLE = [1.5, 2];
/**
 * An image of this resolution or less, or this small in pixels, in which no word is found at all
 * is read once more enlarged to OCR_DPI (at most 6 times, at least twice; a small one also as
 * OVERSAMPLE says): its text may be too small to be found (a 50 dpi TIFF is read perfectly
 * enlarged 3 to 6 times, not at all as it is).
 */
const LOW_DPI = 150;
const SMALL_IMAGE_PX = 300;
const MAX_FACTOR = 6;
/**
 * An enlarged reading is kept only when it scores this much better: read larger, the same words
 * may come in another order (a 150 dpi page scored 0.8% more enlarged, its lines in another order:
 * 14.6% of characters misplaced against 1.4%), while a real gain scored 2.6% more or far beyond.
 */
const ENLARGED_MARGIN = 1.02;

interface Reading {
  page: TsvPage;
  score: number;
  meanConf: number;
  sidewaysShare: number;
}

function assess(page: TsvPage): Reading {
  let letters = 0;
  let score = 0;
  let long = 0;
  let tall = 0;
  for (const w of page.words) {
    const n = w.text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
    letters += n;
    score += (n * Math.max(0, w.conf)) / 100;
    if (n >= 3) {
      long++;
      if (w.height > w.width) tall++;
    }
  }
  return { page, score, meanConf: letters ? (100 * score) / letters : 0, sidewaysShare: long ? tall / long : 0 };
}

/** Tells tesseract the resolution we rendered at (a PNG from sharp carries none it would trust). */
function dpiArgs(image: OcrImage): string[] {
  return image.dpi ? ["--dpi", String(Math.round(image.dpi))] : [];
}

async function read(image: OcrImage, opts: OcrOptions): Promise<Reading> {
  const lang = opts.languages.length ? opts.languages.join("+") : "eng";
  const tsv = await runTesseract(image.path, [...dpiArgs(image), "-l", lang, "--psm", "3", "tsv"], opts);
  return assess(parseTsv(tsv));
}

/** Median height in pixels of the words with two letters or more; undefined when there are none. */
function wordHeight(page: TsvPage): number | undefined {
  const heights = page.words.filter((w) => w.conf > 0 && (w.text.match(/\p{L}/gu)?.length ?? 0) >= 2).map((w) => w.height).sort((a, b) => a - b);
  return heights.length ? heights[Math.floor(heights.length / 2)] : undefined;
}

/**
 * The image read as it is, and, when its text is small or none is found in a small or
 * low-resolution image, read again enlarged (lanczos3, within OCR_MAX_PIXELS): the reading with
 * the best score and the image it was made from. Word boxes are fractions of the image, so any of
 * them places the words alike.
 */
async function readOversampled(image: OcrImage, opts: OcrOptions, dir: string): Promise<{ reading: Reading; image: OcrImage }> {
  let best = { reading: await read(image, opts), image };
  const { width = 0, height = 0 } = await sharp(resolve(image.path), { limitInputPixels: OCR_MAX_PIXELS }).metadata().catch(() => ({ width: 0, height: 0 }));
  for (const factor of oversampling(best.reading.page, image.dpi, width, height)) {
    if (width * height * factor * factor > OCR_MAX_PIXELS) break;
    opts.signal?.throwIfAborted();
    const enlarged: OcrImage = { path: join(dir, `oversampled-${factor}.png`), dpi: image.dpi ? Math.round(image.dpi * factor) : undefined };
    try {
      await sharp(resolve(image.path), { limitInputPixels: OCR_MAX_PIXELS }).resize({ width: Math.round(width * factor), kernel: "lanczos3" }).png({ compressionLevel: 1 }).toFile(enlarged.path);
    } catch {
      break;
    }
    const reading = await read(enlarged, opts);
    if (reading.score > best.reading.score * ENLARGED_MARGIN) best = { reading, image: enlarged };
  }
  return best;
}

/** The enlargements worth a reading, after a first reading `page` of an image of `dpi` and pixels. */
function oversampling(page: TsvPage, dpi: number | undefined, width: number, height: number): number[] {
  const factors = new Set<number>();
  const toOcrDpi = Math.min(MAX_FACTOR, Math.max(OVERSAMPLE[0]!, dpi ? OCR_DPI / dpi : 2));
  const words = wordHeight(page);
  if (words !== undefined && words < SMALL_TEXT_PX) OVERSAMPLE.forEach((f) => factors.add(f));
  // At 200 dpi or less, also enlarged to OCR_DPI, as OCRmyPDF's --oversample 300 does: a JPEG scan
  // of 100 dpi read 1.4% of characters wrong so, 1.9% as it was.
  if (dpi !== undefined && dpi * OVERSAMPLE[0]! <= OCR_DPI) factors.add(toOcrDpi);
  if (words === undefined && page.words.length === 0 && width > 0 && height > 0) {
    const small = Math.min(width, height) < SMALL_IMAGE_PX;
    if (small) OVERSAMPLE.forEach((f) => factors.add(f));
    if (small || (dpi !== undefined && dpi <= LOW_DPI)) factors.add(toOcrDpi);
  }
  return [...factors].sort((a, b) => a - b);
}

/**
 * Reads one page image (a PNG we produced: see ocr-image.ts). An image tesseract cannot decode, or
 * one without text, gives an empty result. Throws "limits" when a run exceeds `timeoutMs`, and the
 * signal's reason on abort (tesseract is killed either way).
 */
export async function ocrPage(image: string | OcrImage, opts: OcrOptions): Promise<OcrResult> {
  const dir = await mkdtemp(join(opts.tmpDir ?? tmpdir(), "quire-ocr-"));
  try {
    const chosen = await readOversampled(typeof image === "string" ? { path: image } : image, opts, dir);
    return await upright(chosen.image, chosen.reading, opts, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The reading kept: `first`, or that of the image turned upright when it looked sideways or unsure and turned reads better. */
async function upright(img: OcrImage, first: Reading, opts: OcrOptions, dir: string): Promise<OcrResult> {
  const unsure = first.page.words.length > 0 && (first.meanConf < UNSURE_CONFIDENCE || first.sidewaysShare > SIDEWAYS_SHARE);
  if (!unsure) return { ...tsvToWords(first.page), rotation: 0 };

  const osd = parseOsd(await runTesseract(img.path, [...dpiArgs(img), "--psm", "0"], opts));
  if (!osd || osd.rotate === 0 || osd.confidence < MIN_OSD_CONFIDENCE) return { ...tsvToWords(first.page), rotation: 0 };

  const turned: OcrImage = { path: join(dir, "upright.png"), dpi: img.dpi };
  try {
    await sharp(resolve(img.path), { limitInputPixels: OCR_MAX_PIXELS }).rotate(osd.rotate).png({ compressionLevel: 1 }).toFile(turned.path);
  } catch {
    return { ...tsvToWords(first.page), rotation: 0 };
  }
  opts.signal?.throwIfAborted();
  const second = await read(turned, opts);
  // Lines read up the page were read, but sideways: upright is worth a slightly lower score.
  const needed = first.sidewaysShare > SIDEWAYS_SHARE ? 0.9 * first.score : first.score;
  if (second.score >= needed && second.sidewaysShare <= SIDEWAYS_SHARE) return { ...tsvToWords(second.page), rotation: osd.rotate };
  return { ...tsvToWords(first.page), rotation: 0 };
}

/**
 * Boxes of the upright page mapped onto the page as stored, i.e. turned back by `rotation` degrees
 * clockwise: for a caller that shows the page unturned.
 */
export function unturnWords(words: Word[], rotation: number): Word[] {
  const round = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 1e5) / 1e5;
  switch (((rotation % 360) + 360) % 360) {
    case 90: // upright = stored turned 90° clockwise: stored (x, y) = upright (y, 1 - x - w)
      return words.map((w) => ({ text: w.text, x: round(w.y), y: round(1 - w.x - w.w), w: w.h, h: w.w }));
    case 180:
      return words.map((w) => ({ text: w.text, x: round(1 - w.x - w.w), y: round(1 - w.y - w.h), w: w.w, h: w.h }));
    case 270:
      return words.map((w) => ({ text: w.text, x: round(1 - w.y - w.h), y: round(w.x), w: w.h, h: w.w }));
    default:
      return words;
  }
}

export interface OcrPagesOptions extends OcrOptions {
  /** Pages read at once: one tesseract per core at most. */
  concurrency: number;
  /** Scratch space for page renderings; each page's files are removed once it is read. */
  tmpDir?: string;
}

/**
 * Runs `task(i, dir)` for i = 0..count-1 with at most `concurrency` at once, each with a fresh
 * scratch folder removed after it. The first failure stops the others (their processes are killed)
 * and is thrown; results keep the order of i.
 */
export async function inParallel<T>(count: number, opts: Pick<OcrPagesOptions, "concurrency" | "signal" | "tmpDir">, task: (i: number, dir: string, signal: AbortSignal) => Promise<T>): Promise<T[]> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  if (opts.signal?.aborted) throw opts.signal.reason;
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const results: T[] = new Array<T>(count);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < count) {
      const i = next++;
      const dir = await mkdtemp(join(opts.tmpDir ?? tmpdir(), "quire-ocr-"));
      try {
        results[i] = await task(i, dir, stop.signal);
      } catch (e) {
        failure ??= { error: e };
        stop.abort(e);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, count)) }, worker));
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
  if (opts.signal?.aborted) throw opts.signal.reason;
  if (failure) throw failure.error;
  return results;
}

/** OCR results for the given pages of a PDF (1-based numbers, displayed sizes), rendered and read in parallel. */
export async function ocrPdfPages(pdfPath: string, pages: { page: number; size: PageSize }[], opts: OcrPagesOptions): Promise<(PageText & { rotation: number })[]> {
  return inParallel(pages.length, opts, async (i, dir, signal) => {
    const { page, size } = pages[i] as { page: number; size: PageSize };
    const image = await renderPdfPageForOcr(pdfPath, page, size, dir, { timeoutMs: opts.timeoutMs, signal, sandbox: opts.sandbox });
    const got = await ocrPage(image, { ...opts, signal, tmpDir: dir });
    return { page, ...got };
  });
}

/** A time limit for a whole set of pages, as the "limits" failure a job ends with. */
export function deadlineSignal(ms: number, parent?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  const limit = new AbortController();
  const onTimeout = () => limit.abort(new ConversionError("limits", `Text recognition took longer than the allowed ${countOf(Math.round(ms / 1000), "second")}.`));
  timeout.addEventListener("abort", onTimeout, { once: true });
  return parent ? AbortSignal.any([limit.signal, parent]) : limit.signal;
}
