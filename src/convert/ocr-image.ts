/**
 * The images OCR reads: always ones we produced (grayscale PNG), never the uploaded file itself —
 * Tesseract's own decoders fail silently on some valid files (BI_BITFIELDS BMP, some TIFFs) and are
 * more attack surface. Every page OCR reads is a page of the document's PDF (an image document's
 * too: src/convert/image-pages.ts). A page of scanned images is read at its images' own
 * resolution (as OCRmyPDF does), from the image itself where it can be: not from a copy resampled
 * to 300 dpi (pdftoppm enlarges an image by repeating pixels: the uneven strokes of a small scan
 * enlarged 3.1× cost Tesseract a sixth of its characters); small or low-resolution text is then
 * enlarged, smoothly, by ocr.ts. Pages without images are rendered at 300 dpi, where Tesseract
 * reads best. Either is lowered for huge pages so that no image exceeds OCR_MAX_PIXELS.
 */
import { join, resolve } from "node:path";
import sharp from "sharp";
import { runPoppler, type PageSize } from "./pdf-inspect.ts";
import type { SandboxSettings } from "./sandbox.ts";

/** Tesseract's models are trained on text of about this resolution. */
export const OCR_DPI = 300;
/** A 2160 pt page at 300 dpi would be 81 Mpx; at 25 Mpx it is still read at about 167 dpi. */
export const OCR_MAX_PIXELS = 25_000_000;

export interface OcrImage {
  path: string;
  /** Resolution to tell tesseract, when known (a PNG from sharp carries none it would trust). */
  dpi?: number;
}

/** The resolution that renders a page of `size` points at `wanted` dpi (OCR_DPI), or less to stay under `maxPixels`. */
export function ocrDpi(size: PageSize, maxPixels = OCR_MAX_PIXELS, wanted = OCR_DPI): number {
  const inches = (size.width / 72) * (size.height / 72);
  const capped = Math.sqrt(maxPixels / inches);
  return Math.max(1, Math.floor(Math.min(wanted, capped)));
}

export interface RenderForOcr {
  timeoutMs: number;
  sandbox: SandboxSettings;
  signal?: AbortSignal;
  maxPixels?: number;
}

/** pdfimages' names of lossy encodings: such images are rendered, not read as stored. */
const LOSSY_ENCODINGS: ReadonlySet<string> = new Set(["jpeg", "jp2"]);

/** What pdfimages -list says of a page's images (masks left out). */
interface PageImage {
  width: number;
  height: number;
  ppi: number;
  /** Its encoding: image (Flate, LZW…), jpeg, jp2, jbig2 or ccitt. */
  enc: string;
}

async function pageImages(pdf: string, page: number, opts: RenderForOcr): Promise<PageImage[]> {
  const out = await runPoppler("pdfimages", (at) => ["-list", "-f", String(page), "-l", String(page), at(pdf)], { timeoutMs: opts.timeoutMs, signal: opts.signal, input: pdf, sandbox: opts.sandbox });
  const images: PageImage[] = [];
  for (const line of out.split("\n")) {
    // page num type width height color comp bpc enc interp object-id generation x-ppi y-ppi size ratio
    const f = line.trim().split(/\s+/);
    if (f.length < 14 || !/^\d+$/.test(f[0] ?? "") || f[2] !== "image") continue;
    const ppi = Math.max(Number(f[12]), Number(f[13]));
    if (Number.isFinite(ppi) && ppi > 0) images.push({ width: Number(f[3]), height: Number(f[4]), ppi, enc: f[8] ?? "" });
  }
  return images;
}

/**
 * Renders page `page` (1-based, displayed size `size`) of a PDF into `dir` as a grayscale PNG. A
 * page that is one losslessly stored image is read from that image itself, its own pixels, when it
 * is what the page shows (pdftoppm smooths even a 1:1 rendering: it changed 16% of a 72 dpi fax
 * page's pixels, and Tesseract read 16% of its characters wrong against 6%); other pages of
 * scanned images are rendered at their own resolution (the highest, as OCRmyPDF takes it): that
 * smoothing softens a JPEG's artefacts (a 300 dpi JPEG scan read 7.3% wrong so, 7.6% as stored).
 * Pages without images are rendered at OCR_DPI.
 */
export async function renderPdfPageForOcr(pdfPath: string, page: number, size: PageSize, dir: string, opts: RenderForOcr): Promise<OcrImage> {
  const pdf = resolve(pdfPath);
  const images = await pageImages(pdf, page, opts);
  const only = images.length === 1 && !LOSSY_ENCODINGS.has(images[0]!.enc) ? images[0] : undefined;
  const own = only ? await ownPixels(pdf, page, size, only, dir, opts) : undefined;
  if (own) return own;
  const native = images.length ? Math.max(...images.map((i) => i.ppi)) : undefined;
  const dpi = ocrDpi(size, opts.maxPixels, native ?? OCR_DPI);
  const prefix = join(resolve(dir), `ocr-page-${page}`);
  await render(pdf, page, ["-r", String(dpi)], prefix, dir, opts);
  return { path: `${prefix}.png`, dpi };
}

/** pdftoppm in the converters' sandbox: the PDF and the output folder are all it sees. */
async function render(pdf: string, page: number, scale: string[], prefix: string, dir: string, opts: RenderForOcr): Promise<void> {
  await runPoppler("pdftoppm", (at) => [...scale, "-gray", "-png", "-f", String(page), "-l", String(page), "-singlefile", at(pdf), at(prefix)], {
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    sandbox: opts.sandbox,
    input: pdf,
    outputDir: resolve(dir),
  });
}

/**
 * The page's one image as stored (pdfimages), in gray, when it is what the page shows: it fills
 * the page (its size at its resolution within two pixels of the page's), and it looks like the
 * page at a glance (32 × 32 thumbnails, mean difference under 8%), so that an image the page
 * turns, flips, masks or inverts is never read as stored. Undefined otherwise.
 */
async function ownPixels(pdf: string, page: number, size: PageSize, image: PageImage, dir: string, opts: RenderForOcr): Promise<OcrImage | undefined> {
  const maxPixels = opts.maxPixels ?? OCR_MAX_PIXELS;
  const fills = Math.abs((size.width * image.ppi) / 72 - image.width) <= 2 && Math.abs((size.height * image.ppi) / 72 - image.height) <= 2;
  if (!fills || image.width * image.height > maxPixels) return undefined;
  const prefix = join(resolve(dir), `ocr-image-${page}`);
  const limit = { limitInputPixels: maxPixels };
  try {
    await runPoppler("pdfimages", (at) => ["-png", "-f", String(page), "-l", String(page), at(pdf), at(prefix)], { timeoutMs: opts.timeoutMs, signal: opts.signal, input: pdf, outputDir: resolve(dir), sandbox: opts.sandbox });
    const stored = `${prefix}-000.png`;
    const meta = await sharp(stored, limit).metadata();
    if (meta.width !== image.width || meta.height !== image.height) return undefined;
    await render(pdf, page, ["-scale-to", "64"], `${prefix}-glance`, dir, opts);
    const glance = (path: string) => sharp(path, limit).flatten({ background: "#ffffff" }).toColourspace("b-w").resize(32, 32, { fit: "fill" }).raw().toBuffer();
    const [a, b] = await Promise.all([glance(stored), glance(`${prefix}-glance.png`)]);
    let diff = 0;
    for (let i = 0; i < a.length; i++) diff += Math.abs((a[i] ?? 0) - (b[i] ?? 0));
    if (diff / a.length > 0.08 * 255) return undefined;
    const path = `${prefix}.png`;
    await sharp(stored, limit).flatten({ background: "#ffffff" }).toColourspace("b-w").png({ compressionLevel: 1 }).toFile(path);
    return { path, dpi: Math.round(image.ppi) };
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    return undefined; // an image pdfimages or sharp cannot give as it is: the page is rendered
  }
}
