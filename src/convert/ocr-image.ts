/**
 * The images OCR reads: always ones we produced (grayscale PNG), never the uploaded file itself —
 * Tesseract's own decoders fail silently on some valid files (BI_BITFIELDS BMP, some TIFFs) and are
 * more attack surface. PDF pages are rendered by pdftoppm at 300 dpi, where Tesseract reads best,
 * lowered for huge pages so no page exceeds OCR_MAX_PIXELS; images are converted by sharp.
 */
import { join, resolve } from "node:path";
import sharp from "sharp";
import { ConversionError } from "./conversion-error.ts";
import { runPoppler, type PageSize } from "./pdf-inspect.ts";

/** Tesseract's models are trained on text of about this resolution. */
export const OCR_DPI = 300;
/** A 2160 pt page at 300 dpi would be 81 Mpx; at 25 Mpx it is still read at about 167 dpi. */
export const OCR_MAX_PIXELS = 25_000_000;
/**
 * Images that say they are below this resolution are enlarged to OCR_DPI: at 50 dpi Tesseract finds
 * nothing. Tesseract itself takes anything under 70 as unknown; 72 and 96 are what most programs
 * write when they know nothing, and enlarging those cost 3× the time on phototest for no gain.
 */
const LOW_DPI = 70;

export interface OcrImage {
  path: string;
  /** Resolution to tell tesseract, when known (a PNG from sharp carries none it would trust). */
  dpi?: number;
}

/** The resolution that renders a page of `size` points at OCR_DPI, or less to stay under `maxPixels`. */
export function ocrDpi(size: PageSize, maxPixels = OCR_MAX_PIXELS): number {
  const inches = (size.width / 72) * (size.height / 72);
  const capped = Math.sqrt(maxPixels / inches);
  return Math.max(1, Math.floor(Math.min(OCR_DPI, capped)));
}

export interface RenderForOcr {
  timeoutMs: number;
  signal?: AbortSignal;
  maxPixels?: number;
}

/** Renders page `page` (1-based, displayed size `size`) of a PDF into `dir` as a grayscale PNG. */
export async function renderPdfPageForOcr(pdfPath: string, page: number, size: PageSize, dir: string, opts: RenderForOcr): Promise<OcrImage> {
  const dpi = ocrDpi(size, opts.maxPixels);
  const prefix = join(resolve(dir), `ocr-page-${page}`);
  // In the converters' sandbox: the PDF and the output folder are all pdftoppm sees.
  await runPoppler("pdftoppm", (at) => ["-r", String(dpi), "-gray", "-png", "-f", String(page), "-l", String(page), "-singlefile", at(resolve(pdfPath)), at(prefix)], {
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    input: resolve(pdfPath),
    outputDir: resolve(dir),
  });
  return { path: `${prefix}.png`, dpi };
}

/** Decoded pixels, for formats sharp cannot read (BMP): the caller decodes, we convert. */
export interface RawPixels {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
  density?: number;
}

/**
 * Every frame of an image (one, or each page of a TIFF) as a grayscale PNG in `dir`, turned as its
 * EXIF orientation says, and enlarged to OCR_DPI when it declares a low resolution. An image sharp
 * cannot decode gives no frames (its page simply has no text), never an exception.
 */
export async function imageFramesForOcr(input: string | RawPixels, dir: string, maxPixels = OCR_MAX_PIXELS): Promise<OcrImage[]> {
  const open = (page: number) =>
    typeof input === "string"
      ? sharp(resolve(input), { page, limitInputPixels: maxPixels })
      : sharp(input.data, { raw: { width: input.width, height: input.height, channels: input.channels }, limitInputPixels: maxPixels });
  let frames: number;
  let density: number | undefined;
  try {
    const meta = await open(0).metadata();
    frames = typeof input === "string" ? Math.max(1, meta.pages ?? 1) : 1;
    density = typeof input === "string" ? meta.density : input.density;
  } catch (e) {
    if (isLimit(e)) throw new ConversionError("limits", `The image is larger than the ${maxPixels.toLocaleString("en-US")} pixels that can be read.`, { cause: e });
    return [];
  }
  const out: OcrImage[] = [];
  for (let f = 0; f < frames; f++) {
    const path = join(resolve(dir), `ocr-frame-${f + 1}.png`);
    try {
      // Transparency over white, as a viewer shows it: Tesseract would see text on a black ground.
      const img = open(f).rotate().flatten({ background: "#ffffff" }).toColourspace("b-w");
      const meta = await open(f).metadata();
      // EXIF orientations 5..8 are quarter turns: the upright image is as wide as the stored one is tall.
      const turned = (meta.orientation ?? 1) >= 5;
      const width = (turned ? meta.height : meta.width) ?? 0;
      const height = (turned ? meta.width : meta.height) ?? 0;
      let dpi = density && density > 0 ? density : undefined;
      if (dpi && dpi < LOW_DPI && width > 0 && height > 0) {
        const scale = Math.min(OCR_DPI / dpi, Math.sqrt(maxPixels / (width * height)));
        if (scale > 1) {
          img.resize({ width: Math.round(width * scale), kernel: "lanczos3" });
          dpi = Math.round(dpi * scale);
        }
      }
      await img.png({ compressionLevel: 1 }).toFile(path);
      out.push({ path, dpi });
    } catch (e) {
      if (isLimit(e)) throw new ConversionError("limits", `The image is larger than the ${maxPixels.toLocaleString("en-US")} pixels that can be read.`, { cause: e });
      // A damaged frame has no text; the others still do.
    }
  }
  return out;
}

function isLimit(e: unknown): boolean {
  return e instanceof Error && /pixel limit/i.test(e.message);
}
