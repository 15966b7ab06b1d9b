/**
 * Page images and covers. Poppler's pdftoppm rasterizes a run of up to RUN_PAGES consecutive pages
 * at the reading width and writes them as JPEG itself, reporting each finished page (-progress);
 * each one is moved into place as the reading-size image while poppler draws the next, and sharp
 * derives the thumbnail from it (a JPEG shrinks on load, so that costs little). Covers are derived
 * the same way from page 1's reading-size image. Why this shape: docs/scaling.md, "Page rendering
 * cost" (`npm run bench -- convert` measures it; bench/render.ts compared renderers and encoders).
 */
import { mkdir, mkdtemp, rename, rm, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import sharp, { type Sharp } from "sharp";
import { ConversionError } from "./conversion-error.ts";
import { assertPixelLimit, inspectPdf, runPoppler, type PageSize, type PdfLimits } from "./pdf-inspect.ts";
import { COVER_WIDTHS, IMAGE_EXTENSION, IMAGE_MIME_TYPE } from "../domain/page-images.ts";

export { COVER_WIDTHS, IMAGE_EXTENSION, IMAGE_MIME_TYPE };

export interface RenderedPage {
  page: number;
  size: "thumb" | "read";
  path: string;
  width: number;
  height: number;
  bytes: number;
}

/** Most pages one pdftoppm process draws. Each process costs a start (about 0.1 s of CPU with its
 *  sandbox, and every font of the document loaded again): runs of 8 pages spent a third as much CPU
 *  again as the drawing. Runs are long; the limit only keeps them short enough that processes
 *  finishing at different times still share the work out. Pages reach `onPage` as each is drawn. */
export const RUN_PAGES = 128;
/** Rasterizing processes at once: the 2 cores of our machines; thumbnails overlap with them. */
export const RENDER_CONCURRENCY = 2;

/**
 * JPEG q90: at equal quality (SSIM 0.997 on text, see bench/render.ts) it had the lower bytes ×
 * encode time on text pages and over whole documents (about 1.3× lower than the best WebP); WebP
 * won only the picture page, narrowly. It is also what poppler can write directly, which saves a
 * second encoding of every reading-size page.
 */
export const JPEG_QUALITY = 90;

function encode(img: Sharp): Sharp {
  return img.jpeg({ quality: JPEG_QUALITY });
}

function source(file: string): Sharp {
  // The pixel area was checked against maxPagePixels before poppler ran; sharp's own default cap
  // would only make a configured limit above it fail in a confusing place.
  return sharp(file, { limitInputPixels: false });
}

/** Consecutive pages that one pdftoppm run renders with the same scaling arguments. */
interface Batch {
  first: number;
  last: number;
  scale: string[];
}

/**
 * How pdftoppm should scale a page to `width` pixels. -scale-to-x fits each page of a batch on its
 * own, but poppler applies it to the page as stored, before /Rotate: a quarter-turned page would come
 * out as wide as it is tall. Those get a resolution computed from their displayed width instead.
 */
function scaleArgs(page: PageSize, quarterTurned: boolean, width: number): string[] {
  return quarterTurned ? ["-r", String((72 * width) / page.width)] : ["-scale-to-x", String(width), "-scale-to-y", "-1"];
}

/** Batches of at most `size` consecutive pages over first..last, split where the scaling changes. */
function planBatches(pages: PageSize[], quarterTurned: boolean[], width: number, first: number, last: number, size: number): Batch[] {
  const batches: Batch[] = [];
  for (let n = first; n <= last; n++) {
    const scale = scaleArgs(pages[n - 1] as PageSize, quarterTurned[n - 1] ?? false, width);
    const open = batches.at(-1);
    if (open && open.last - open.first + 1 < size && open.scale.join(" ") === scale.join(" ")) open.last = n;
    else batches.push({ first: n, last: n, scale });
  }
  return batches;
}

/** Batch length for `count` pages on `processes` processes: an equal share each, in as few rounds
 *  of at most RUN_PAGES pages as will do, so that the processes finish together. */
function batchLength(count: number, processes: number): number {
  const rounds = Math.ceil(count / (processes * RUN_PAGES));
  return Math.max(1, Math.ceil(count / (processes * rounds)));
}

/** pdftoppm -progress: "page last-page file" on stderr once a page's file is written. */
const PROGRESS_LINE = /^(\d+) \d+ \S*\/(p-\d+\.jpg)$/;

/**
 * Rasterizes one batch to JPEG files in `dir`, at most `width` px wide (poppler rounds sizes up, and
 * -W trims the possible extra column rather than resampling, which would blur the text), and hands
 * each page's file to `onPage` as soon as poppler reports it written. `timeoutMs` is the limit on
 * each page, not on the batch. Throws "corrupt" when a page did not come.
 */
async function rasterize(pdfPath: string, batch: Batch, width: number, dir: string, limits: PdfLimits, signal: AbortSignal | undefined, onPage: (page: number, file: string) => void): Promise<void> {
  await mkdir(dir);
  const args = ["-progress", "-jpeg", "-jpegopt", `quality=${JPEG_QUALITY}`, "-cropbox", ...batch.scale, "-x", "0", "-y", "0", "-W", String(width), "-H", "0"];
  let expected = batch.first;
  let partial = "";
  await runPoppler("pdftoppm", (at) => [...args, "-f", String(batch.first), "-l", String(batch.last), at(pdfPath), at(join(dir, "p"))], {
    input: pdfPath,
    outputDir: dir,
    timeoutMs: limits.timeoutMs,
    sandbox: limits.sandbox,
    signal,
    onStderr: (chunk, restartTimeout) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const m = PROGRESS_LINE.exec(line);
        // Pages come in order; one poppler skipped would show as a later number, never reported here.
        if (!m || Number(m[1]) !== expected || expected > batch.last) continue;
        restartTimeout();
        onPage(expected++, join(dir, basename(m[2] ?? "")));
      }
    },
  });
  if (expected <= batch.last) throw new ConversionError("corrupt", `Page ${expected} of the PDF could not be rendered.`);
}

/**
 * Moves poppler's JPEG to `target` when it is exactly `width` px wide (it always should be; a page
 * poppler made narrower is resized rather than published at the wrong width).
 */
async function placeExactWidth(file: string, target: string, width: number): Promise<{ width: number; height: number; bytes: number }> {
  const meta = await source(file).metadata();
  if (meta.width === width && meta.height !== undefined) {
    await rename(file, target);
    return { width, height: meta.height, bytes: (await stat(target)).size };
  }
  const info = await encode(source(file).resize({ width })).toFile(target);
  await rm(file, { force: true });
  return { width: info.width, height: info.height, bytes: info.size };
}

async function derive(file: string, target: string, width: number): Promise<{ width: number; height: number; bytes: number }> {
  const info = await encode(source(file).resize({ width })).toFile(target);
  return { width: info.width, height: info.height, bytes: info.size };
}

function pageFile(outDir: string, page: number, size: RenderedPage["size"]): string {
  return join(outDir, `page-${String(page).padStart(4, "0")}-${size}.${IMAGE_EXTENSION}`);
}

async function withScratchDir<T>(parent: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(parent, ".render-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface RenderOptions {
  /**
   * Without `thumb`, only the reading size is made: the reader's thumbnails are variants made from
   * it when first asked for (src/page-variants.ts), which took a third of the step's processor time
   * off it (`npm run bench -- pages`, docs/images.md).
   */
  widths: { thumb?: number; read: number };
  limits: PdfLimits;
  signal?: AbortSignal;
  onPage?: (p: RenderedPage) => void;
  /** How many pdftoppm runs go at once (default RENDER_CONCURRENCY). */
  processes?: number;
  /** The pages to render, firstPage..lastPage (default: all); a range outside the document is a RangeError. */
  firstPage?: number;
  lastPage?: number;
}

/**
 * Renders pages firstPage..lastPage (default every page) at `widths.read` and (if given) `widths.thumb` pixels
 * wide into `outDir` (created if needed). `onPage` sees each image as soon as it is written; batches
 * run side by side, so pages arrive in order within a batch, not overall. The result is sorted by
 * page, read before thumb. On failure the images already written stay in `outDir` (the caller owns
 * it); scratch files do not.
 */
export async function renderPages(pdfPath: string, outDir: string, opts: RenderOptions): Promise<RenderedPage[]> {
  const { widths, limits, signal } = opts;
  // Absolute paths: nothing handed to poppler may start with "-".
  pdfPath = resolve(pdfPath);
  outDir = resolve(outDir);
  for (const w of widths.thumb === undefined ? [widths.read] : [widths.thumb, widths.read]) {
    if (!Number.isInteger(w) || w < 1) throw new RangeError(`image widths must be positive integers, got ${w}`);
  }
  signal?.throwIfAborted();
  const { pages, quarterTurned } = await inspectPdf(pdfPath, limits, signal);
  const first = opts.firstPage ?? 1;
  const last = opts.lastPage ?? pages.length;
  if (!Number.isInteger(first) || !Number.isInteger(last) || first < 1 || last > pages.length || first > last) {
    throw new RangeError(`pages ${first}..${last} are not within the document's 1..${pages.length}`);
  }
  assertPixelLimit(pages.slice(first - 1, last), Math.max(widths.read, widths.thumb ?? 0), limits, first);
  await mkdir(outDir, { recursive: true });
  const processes = Math.max(1, opts.processes ?? RENDER_CONCURRENCY);
  const batches = planBatches(pages, quarterTurned, widths.read, first, last, batchLength(last - first + 1, processes));

  const stop = new AbortController();
  const forward = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", forward, { once: true });
  const results: RenderedPage[] = [];
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown) => {
    failure ??= { error };
    stop.abort(error);
  };

  const finishPage = async (page: number, file: string) => {
    stop.signal.throwIfAborted();
    const readPath = pageFile(outDir, page, "read");
    const read: RenderedPage = { page, size: "read", path: readPath, ...(await placeExactWidth(file, readPath, widths.read)) };
    const made = [read];
    if (widths.thumb !== undefined) {
      const thumbPath = pageFile(outDir, page, "thumb");
      made.push({ page, size: "thumb", path: thumbPath, ...(await derive(readPath, thumbPath, widths.thumb)) });
    }
    for (const r of made) {
      results.push(r);
      opts.onPage?.(r);
    }
  };

  let next = 0;
  try {
    await withScratchDir(outDir, async (scratch) => {
      // Each worker keeps one poppler process busy; each page it reports goes to sharp at once, one
      // page after the other, so thumbnails are made while poppler draws the next pages.
      const worker = async () => {
        let finishing: Promise<void> = Promise.resolve();
        while (!stop.signal.aborted && next < batches.length) {
          const batch = batches[next++] as Batch;
          try {
            await rasterize(pdfPath, batch, widths.read, join(scratch, `b${batch.first}`), limits, stop.signal, (page, file) => {
              finishing = finishing.then(() => finishPage(page, file)).catch(fail);
            });
          } catch (error) {
            fail(error);
          }
          await finishing;
        }
      };
      await Promise.all(Array.from({ length: Math.min(processes, batches.length) }, worker));
    });
  } finally {
    signal?.removeEventListener("abort", forward);
  }
  if (failure) throw failure.error;
  stop.signal.throwIfAborted();
  return results.sort((a, b) => a.page - b.page || (a.size === b.size ? 0 : a.size === "read" ? -1 : 1));
}

export interface Covers {
  small: string;
  medium: string;
  large: string;
  width: number;
  height: number;
}

/**
 * The first page as three covers, `cover-{small,medium,large}.jpg` in `outDir`, 150/300/600 px wide.
 * `width`/`height` are the large cover's pixels (the document's coverWidth/coverHeight). `firstPage`,
 * page 1 as renderPages made it, saves rendering the page again when it is at least as wide as the
 * large cover (downscaled, never enlarged).
 */
export async function renderCovers(pdfPath: string, outDir: string, limits: PdfLimits, firstPage?: RenderedPage): Promise<Covers> {
  pdfPath = resolve(pdfPath);
  outDir = resolve(outDir);
  const path = (name: keyof typeof COVER_WIDTHS) => join(outDir, `cover-${name}.${IMAGE_EXTENSION}`);
  const covers = (large: { width: number; height: number }): Covers => ({ small: path("small"), medium: path("medium"), large: path("large"), width: large.width, height: large.height });
  const smaller = (file: string) => Promise.all([derive(file, path("medium"), COVER_WIDTHS.medium), derive(file, path("small"), COVER_WIDTHS.small)]);
  if (firstPage && firstPage.page === 1 && firstPage.width >= COVER_WIDTHS.large) {
    await mkdir(outDir, { recursive: true });
    const [large] = await Promise.all([derive(firstPage.path, path("large"), COVER_WIDTHS.large), smaller(firstPage.path)]);
    return covers(large);
  }
  const { pages, quarterTurned } = await inspectPdf(pdfPath, limits);
  assertPixelLimit(pages.slice(0, 1), COVER_WIDTHS.large, limits);
  await mkdir(outDir, { recursive: true });
  return withScratchDir(outDir, async (dir) => {
    const [batch] = planBatches(pages, quarterTurned, COVER_WIDTHS.large, 1, 1, 1);
    let file: string | undefined;
    if (batch) await rasterize(pdfPath, batch, COVER_WIDTHS.large, join(dir, "b1"), limits, undefined, (_page, f) => (file = f));
    if (!file) throw new ConversionError("corrupt", "The first page of the PDF could not be rendered.");
    const large = await placeExactWidth(file, path("large"), COVER_WIDTHS.large);
    await smaller(path("large"));
    return covers(large);
  });
}
