/**
 * Page images and covers. Poppler's pdftocairo rasterizes a batch of pages to uncompressed TIFF in a
 * scratch folder; sharp (libvips) encodes each page at the reading width and as a thumbnail, then the
 * TIFF is deleted. Why these two: bench/render.ts (`npx tsx bench/render.ts`) measured the options.
 */
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import sharp, { type OutputInfo, type Sharp } from "sharp";
import { ConversionError } from "./conversion-error.ts";
import { assertPixelLimit, inspectPdf, runPoppler, type PdfLimits } from "./pdf-inspect.ts";

export interface RenderedPage {
  page: number;
  size: "thumb" | "read";
  path: string;
  width: number;
  height: number;
  bytes: number;
}

/** Pages per pdftocairo process: long enough to spread its start-up, short enough that a batch's
 *  TIFFs (about 6 MB a page at 1200 px) stay small on disk and `timeoutMs` means something. */
export const BATCH_PAGES = 8;
/** Rasterizing processes at once: the 2 cores of our machines; encoding overlaps with them. */
export const RENDER_CONCURRENCY = 2;
export const COVER_WIDTHS = { small: 150, medium: 300, large: 600 } as const;

export const IMAGE_EXTENSION = "jpg";
export const IMAGE_MIME_TYPE = "image/jpeg";

/**
 * JPEG q90: at equal quality (SSIM 0.997 on text, see bench/render.ts) it had the lower bytes ×
 * encode time on text pages and over whole documents (about 1.3× lower than the best WebP); WebP
 * won only the picture page, narrowly. WebP q70 effort 0 would be ~0.5× the bytes at ~2.7× the
 * encode time: switching is this function and the two constants above.
 */
function encode(img: Sharp): Sharp {
  return img.jpeg({ quality: 90 });
}

/**
 * Exactly `width` px wide. pdftocairo's -scale-to-x rounds up, so a page can come out one pixel too
 * wide: dropping that sliver column keeps the text sharp, where resampling would blur it.
 */
async function toWidth(src: Sharp, width: number): Promise<Sharp> {
  const meta = await src.metadata();
  const have = meta.width ?? width;
  if (have > width && have <= width + 2) return src.clone().extract({ left: 0, top: 0, width, height: meta.height ?? 1 });
  return have === width ? src.clone() : src.clone().resize({ width });
}

/** Rasterizes pages first..last, `width` px wide; returns page number → TIFF path in `dir`. */
async function rasterize(pdfPath: string, first: number, last: number, width: number, dir: string, timeoutMs: number, signal?: AbortSignal): Promise<Map<number, string>> {
  const args = ["-tiff", "-tiffcompression", "none", "-cropbox", "-scale-to-x", String(width), "-scale-to-y", "-1", "-f", String(first), "-l", String(last), pdfPath, join(dir, "p")];
  await runPoppler("pdftocairo", args, { timeoutMs, signal });
  const files = new Map<number, string>();
  for (const name of await readdir(dir)) {
    const m = /^p-(\d+)\.tif$/.exec(name);
    if (m) files.set(Number(m[1]), join(dir, name));
  }
  return files;
}

async function withScratchDir<T>(parent: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(parent, ".render-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function source(file: string): Sharp {
  // The pixel area was checked against maxPagePixels before poppler ran; sharp's own default cap
  // would only make a configured limit above it fail in a confusing place.
  return sharp(file, { limitInputPixels: false });
}

function pageFile(outDir: string, page: number, size: RenderedPage["size"]): string {
  return join(outDir, `page-${String(page).padStart(4, "0")}-${size}.${IMAGE_EXTENSION}`);
}

/**
 * Runs `task` over `items`, at most `limit` at a time. The first failure aborts `stop` (killing the
 * sibling's poppler process) and is what gets thrown, once every task has settled.
 */
async function runPool<T>(items: T[], limit: number, stop: AbortController, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && !stop.signal.aborted && next < items.length) {
      const item = items[next++] as T;
      try {
        await task(item);
      } catch (error) {
        failure ??= { error };
        stop.abort(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  stop.signal.throwIfAborted();
}

/**
 * Renders every page at `widths.read` and `widths.thumb` pixels wide into `outDir` (created if
 * needed). `onPage` sees each image as soon as it is written; batches run side by side, so pages
 * arrive in batch order, not strictly in page order. The result is sorted by page, read before thumb.
 * On failure the images already written stay in `outDir` (the caller owns it); scratch files do not.
 */
export async function renderPages(
  pdfPath: string,
  outDir: string,
  opts: { widths: { thumb: number; read: number }; limits: PdfLimits; signal?: AbortSignal; onPage?: (p: RenderedPage) => void },
): Promise<RenderedPage[]> {
  const { widths, limits, signal } = opts;
  // Absolute paths: nothing handed to poppler may start with "-".
  pdfPath = resolve(pdfPath);
  outDir = resolve(outDir);
  for (const w of [widths.thumb, widths.read]) {
    if (!Number.isInteger(w) || w < 1) throw new RangeError(`image widths must be positive integers, got ${w}`);
  }
  signal?.throwIfAborted();
  const { pages } = await inspectPdf(pdfPath, limits, signal);
  assertPixelLimit(pages, Math.max(widths.read, widths.thumb), limits);
  await mkdir(outDir, { recursive: true });

  const batches: [number, number][] = [];
  for (let first = 1; first <= pages.length; first += BATCH_PAGES) batches.push([first, Math.min(pages.length, first + BATCH_PAGES - 1)]);

  const stop = new AbortController();
  const forward = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", forward, { once: true });
  const results: RenderedPage[] = [];
  try {
    await runPool(batches, RENDER_CONCURRENCY, stop, ([first, last]) =>
      withScratchDir(outDir, async (dir) => {
        const files = await rasterize(pdfPath, first, last, widths.read, dir, limits.timeoutMs, stop.signal);
        for (let page = first; page <= last; page++) {
          stop.signal.throwIfAborted();
          const file = files.get(page);
          if (!file) throw new ConversionError("corrupt", `Page ${page} of the PDF could not be rendered.`);
          const src = source(file);
          const made = await Promise.all(
            (["read", "thumb"] as const).map(async (size): Promise<RenderedPage> => {
              const path = pageFile(outDir, page, size);
              const info = await encode(await toWidth(src, widths[size])).toFile(path);
              return { page, size, path, width: info.width, height: info.height, bytes: info.size };
            }),
          );
          // Only one page's pixels are held at a time; the TIFF goes as soon as it is encoded.
          await rm(file, { force: true });
          for (const r of made) {
            results.push(r);
            opts.onPage?.(r);
          }
        }
      }),
    );
  } finally {
    signal?.removeEventListener("abort", forward);
  }
  return results.sort((a, b) => a.page - b.page || (a.size === b.size ? 0 : a.size === "read" ? -1 : 1));
}

/**
 * The first page as three covers, `cover-{small,medium,large}.jpg` in `outDir`, 150/300/600 px wide.
 * `width`/`height` are the large cover's pixels (the document's coverWidth/coverHeight).
 */
export async function renderCovers(pdfPath: string, outDir: string, limits: PdfLimits): Promise<{ small: string; medium: string; large: string; width: number; height: number }> {
  pdfPath = resolve(pdfPath);
  outDir = resolve(outDir);
  const { pages } = await inspectPdf(pdfPath, limits);
  assertPixelLimit(pages.slice(0, 1), COVER_WIDTHS.large, limits);
  await mkdir(outDir, { recursive: true });
  return withScratchDir(outDir, async (dir) => {
    const file = (await rasterize(pdfPath, 1, 1, COVER_WIDTHS.large, dir, limits.timeoutMs)).get(1);
    if (!file) throw new ConversionError("corrupt", "The first page of the PDF could not be rendered.");
    const src = source(file);
    const names = ["small", "medium", "large"] as const;
    const infos = await Promise.all(
      names.map(async (name) => encode(await toWidth(src, COVER_WIDTHS[name])).toFile(join(outDir, `cover-${name}.${IMAGE_EXTENSION}`))),
    );
    const large = infos[2] as OutputInfo;
    return {
      small: join(outDir, `cover-small.${IMAGE_EXTENSION}`),
      medium: join(outDir, `cover-medium.${IMAGE_EXTENSION}`),
      large: join(outDir, `cover-large.${IMAGE_EXTENSION}`),
      width: large.width,
      height: large.height,
    };
  });
}
