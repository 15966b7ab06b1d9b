/**
 * What a published page is as an image: its widths, its formats, the covers' widths. One place for
 * the pipeline that renders them, the pages that show them and the tests that check them.
 */

/**
 * Pixel widths of every page as the conversion renders it: the thumbnail strip and the reading
 * size. These JPEGs (q90, `pages/read/N.jpg`, `pages/thumb/N.jpg`) are every document's master
 * images, old and new: the reader's smaller and WebP variants are made from them (docs/images.md).
 */
export const PAGE_WIDTHS = { thumb: 200, read: 1200 } as const;
/** Pixel widths of the three covers (page 1). */
export const COVER_WIDTHS = { small: 150, medium: 300, large: 600 } as const;

export const IMAGE_EXTENSION = "jpg";
export const IMAGE_MIME_TYPE = "image/jpeg";

/**
 * The widths the reader offers each page in (`srcset`): a phone's 1x and 2x, a wide screen's page
 * at 1x (about 520 CSS px in the paged view at 1366 × 850) and at 2x or zoomed, and the master's own
 * width. The largest is the master's: nothing is ever enlarged.
 */
export const VARIANT_WIDTHS = [400, 600, 800, PAGE_WIDTHS.read] as const;
/** The thumbnail strip's variant (4.5rem wide, 2x and a little more). */
export const THUMB_VARIANT_WIDTH = PAGE_WIDTHS.thumb;
export type VariantWidth = (typeof VARIANT_WIDTHS)[number] | typeof THUMB_VARIANT_WIDTH;
export const ALL_VARIANT_WIDTHS: readonly VariantWidth[] = [THUMB_VARIANT_WIDTH, ...VARIANT_WIDTHS];

export type VariantFormat = "webp" | "jpeg";
export const VARIANT_EXTENSION: Record<VariantFormat, string> = { webp: "webp", jpeg: "jpg" };
export const VARIANT_MIME_TYPE: Record<VariantFormat, string> = { webp: "image/webp", jpeg: "image/jpeg" };

/**
 * What a page is, as its pixels say (classifyPage): black or grey text on paper; a page without
 * colour but with many mid tones (a grey scan, a black-and-white photo); a page with colour.
 */
export type PageClass = "text" | "grey" | "colour";

/**
 * The lossy encoding of each class, each the lowest quality that reaches, on every sample page of its class,
 * the SSIM today's JPEG q90 reaches at the same width (`npm run bench -- pages` finds and prints them).
 * libwebp's `text` preset keeps edges; pages without colour are encoded from one channel, so their
 * chroma costs nothing and a JPEG fallback is a one-channel JPEG. Drawn pages (mostly paper and ink)
 * are first tried in FLAT_ENCODING.
 */
export const PAGE_ENCODINGS: Record<PageClass, { webpQuality: number; preset: "text" | "photo" | "picture"; grey: boolean }> = {
  text: { webpQuality: 85, preset: "text", grey: true },
  grey: { webpQuality: 85, preset: "photo", grey: true },
  colour: { webpQuality: 91, preset: "picture", grey: false },
};

/**
 * The encoding of a drawn page (text, a slide, a table: paper and ink, their tones only at the edges
 * of letters and lines): lossless WebP of its pixels with every channel at or above `paper` made
 * paper (255), at or below `ink` made ink (0), and the tones between rounded to multiples of `step`.
 * A page without colour then has about 30 tones, which libwebp stores as a palette; the ringing the
 * master's JPEG left around every letter is gone, which is why it reaches the old page's SSIM
 * although it is made from that JPEG. Figures (`npm run bench -- pages`, docs/images.md): text pages
 * at 0.2–0.37 of the old bytes at 1200 px, SSIM above the old page's; scans and photographs
 * come out larger than lossy WebP and lose their paper's grain, so FLAT_CHOICE keeps them from it.
 * Below `smallBelow` px the tones between are steps of `smallStep` (flatStep).
 */
export const FLAT_ENCODING = { paper: 244, ink: 8, step: 8, effort: 1, smallStep: 4, smallBelow: 800 } as const;

/** FLAT_ENCODING's step between paper and ink at `width`: below `smallBelow` each glyph has fewer pixels, more of them edge tones, and steps of 8 cost SSIM (the glyph table at 600 px: 0.99855 against JPEG q90's 0.99859; with steps of 4, 0.9993). */
export function flatStep(width: number): number {
  return width < FLAT_ENCODING.smallBelow ? FLAT_ENCODING.smallStep : FLAT_ENCODING.step;
}

/**
 * When a page gets FLAT_ENCODING: decided by measuring it. A page is tried when at least
 * `minPlainShare` of its pixels are paper or ink (a photograph is not: 0.1%), `minPlainShareColour` for a page with colour (`flatCandidate`). The flat encoding's
 * bytes are compared to the master's scaled to the variant's area: kept at or under `keepUnder` of
 * them (text, slides: 0.13–0.37 at 1200 px), given up over `dropOver` (scans: their grain is not
 * flat, and snapping it to paper costs SSIM: 0.49–1.1), and in between the lossy encoding is made
 * too and the flat one kept when it is at most `lossyShare` of the lossy one's bytes.
 */
export const FLAT_CHOICE = { minPlainShare: 0.8, minPlainShareColour: 0.92, keepUnder: 0.4, dropOver: 0.6, lossyShare: 0.8 } as const;

/**
 * Whether a page is tried in FLAT_ENCODING. A page with colour needs more of it plain: snapping
 * colours to steps costs luma where they cover much of the page (the book's cover, 89% plain, fell
 * short of JPEG q90's SSIM flat at every width; the colour pages of text, 95% and 96%, did not).
 */
export function flatCandidate(t: PageTraits): boolean {
  if (t.pageClass === "grey") return false;
  return t.plainShare >= (t.pageClass === "colour" ? FLAT_CHOICE.minPlainShareColour : FLAT_CHOICE.minPlainShare);
}

/**
 * A photograph: a page with almost no paper or ink (an uploaded photo: 0.1%; the least plain page
 * of text, a scan, 86%). Lossy WebP reaches JPEG q90's SSIM on one at no quality (its 4:2:0 and its
 * filter: 0.995–0.997 against 0.998, up to q100), so a photograph stays JPEG: the master at its
 * width, and `jpegQuality` below it (made from the master, a second generation: q93 fell short by
 * up to 0.0003, q95 reaches at 400, 600 and 800 px).
 */
export const PHOTOGRAPH = { maxPlainShare: 0.3, jpegQuality: 95 } as const;

export function isPhotograph(t: PageTraits): boolean {
  return t.plainShare < PHOTOGRAPH.maxPlainShare;
}

/** The format of an encoded image by its first bytes: a page variant may be stored as JPEG under a WebP key (a photograph, a master kept whole). */
export function imageFormatOf(bytes: Uint8Array): VariantFormat {
  return bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff ? "jpeg" : "webp";
}

/** The JPEG fallback's quality: today's, so a browser without WebP sees what it always saw. */
export const FALLBACK_JPEG_QUALITY = 90;

/** What the classification reads from a page's pixels. */
export interface PageTraits {
  pageClass: PageClass;
  /** Share of the pixels that are plain paper or ink (FLAT_ENCODING's `paper`/`ink`), 0..1. */
  plainShare: number;
}

/**
 * A page's class from its pixels, 8-bit RGB (channels 3) or grey (channels 1), typically a small
 * rendering of the page: colour when more than 1 in 500 pixels is clearly coloured (a channel apart
 * from the others by more than 24: anti-aliased black text stays well within that), `grey` when
 * more than 15% of the pixels are mid tones (neither paper nor ink), `text` otherwise; and how much
 * of it is plain paper or ink (FLAT_CHOICE).
 */
export function pageTraits(pixels: Uint8Array, channels: number): PageTraits {
  const n = Math.floor(pixels.length / channels);
  if (n === 0) return { pageClass: "text", plainShare: 1 };
  let coloured = 0;
  let mid = 0;
  let plain = 0;
  for (let i = 0; i < n; i++) {
    const o = i * channels;
    const r = pixels[o] ?? 0;
    const g = channels >= 3 ? (pixels[o + 1] ?? 0) : r;
    const b = channels >= 3 ? (pixels[o + 2] ?? 0) : r;
    const hi = Math.max(r, g, b);
    const lo = Math.min(r, g, b);
    if (hi - lo > 24) coloured++;
    if (lo >= FLAT_ENCODING.paper || hi <= FLAT_ENCODING.ink) plain++;
    const y = (r * 299 + g * 587 + b * 114) / 1000;
    if (y > 48 && y < 208) mid++;
  }
  const pageClass = coloured * 500 > n ? "colour" : mid > n * 0.15 ? "grey" : "text";
  return { pageClass, plainShare: plain / n };
}

export function classifyPage(pixels: Uint8Array, channels: number): PageClass {
  return pageTraits(pixels, channels).pageClass;
}
