/**
 * The reader's page images at the width and in the format a browser asks for, made from the page's
 * master: the reading-size JPEG every document has had since its conversion (`pages/read/N.jpg`,
 * 1200 px, q90). A variant is made once, by the first request for it (the reader's routes) or ahead
 * of time (the conversion for page 1, the `page-variants` job for the rest), and then stored under
 * its own key beside the master, which is never changed: old documents, old addresses and old
 * caches keep working. Why from the master rather than from the PDF: docs/images.md.
 */
import { Readable } from "node:stream";
import { buffer as readAll } from "node:stream/consumers";
import sharp from "sharp";
import { blobKeys } from "./blobs/blob-keys.ts";
import type { BlobStore } from "./blobs/blob-store.ts";
import {
  ALL_VARIANT_WIDTHS, FALLBACK_JPEG_QUALITY, FLAT_CHOICE, FLAT_ENCODING, flatCandidate, flatStep, imageFormatOf, isPhotograph,
  PAGE_ENCODINGS, PAGE_WIDTHS, pageTraits, PHOTOGRAPH, VARIANT_EXTENSION,
  type PageClass, type PageTraits, type VariantFormat, type VariantWidth,
} from "./domain/page-images.ts";

export interface PageImage {
  body: Buffer;
  format: VariantFormat;
}

/** Pixels of a page at one width, and what they show. */
export interface Decoded extends PageTraits {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 3;
  /** The master's bytes scaled to this rendering's area: what the old page cost at this size (FLAT_CHOICE's yardstick). */
  baseBytes: number;
  /** The master itself, when these are its pixels at its own width (not resized). */
  master?: Buffer;
}

/**
 * How a variant was encoded: lossless flat (FLAT_ENCODING), lossy WebP by its class, a JPEG (the
 * fallback, or a photograph's), the master's pixels as lossless WebP, or the master's own bytes.
 */
export type VariantEncoding = "flat" | "lossy" | "jpeg" | "lossless" | "master";

/** Every 7th pixel is enough to tell colour and mid tones apart, at a seventh of the cost. */
function sampled(data: Buffer, channels: number): Uint8Array {
  const step = 7;
  const n = Math.floor(data.length / channels / step);
  const out = new Uint8Array(n * channels);
  for (let i = 0; i < n; i++) for (let c = 0; c < channels; c++) out[i * channels + c] = data[i * step * channels + c] ?? 0;
  return out;
}

/** The master decoded at `width`, judged at that width. */
async function decode(master: Buffer, width: number): Promise<Decoded> {
  // The master's pixel area was bounded when it was rendered (maxPagePixels).
  // fastShrinkOnLoad off: a JPEG shrunk while decoded (1/2, 1/4) loses fine text at 400 px (SSIM 0.97 where a plain resize keeps 0.99).
  const img = sharp(master, { limitInputPixels: false });
  const masterWidth = (await img.metadata()).width ?? width;
  const { data, info } = await img.resize({ width, withoutEnlargement: true, fastShrinkOnLoad: false }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const channels = info.channels === 1 ? 1 : 3;
  return {
    data, width: info.width, height: info.height, channels,
    baseBytes: master.length * (info.width / masterWidth) ** 2,
    ...(info.width === masterWidth ? { master } : {}),
    ...pageTraits(sampled(data, channels), channels),
  };
}

/** FLAT_ENCODING's tones for a step: paper, ink, and steps between. */
const flatTones = (step: number) =>
  Uint8Array.from({ length: 256 }, (_, v) => v >= FLAT_ENCODING.paper ? 255 : v <= FLAT_ENCODING.ink ? 0 : Math.min(255, Math.round(v / step) * step));
const TONES_BY_STEP = new Map<number, Uint8Array>([FLAT_ENCODING.step, FLAT_ENCODING.smallStep].map((step) => [step, flatTones(step)]));

/** The page in FLAT_ENCODING: one channel (its luma) when `grey`, else each channel on its own. */
function flatWebp(d: Decoded, grey: boolean): Promise<Buffer> {
  const tones = TONES_BY_STEP.get(flatStep(d.width))!;
  const channels = grey ? 1 : d.channels;
  const n = d.width * d.height;
  const out = Buffer.allocUnsafe(n * channels);
  if (channels === d.channels) {
    for (let i = 0; i < out.length; i++) out[i] = tones[d.data[i] ?? 0] ?? 0;
  } else {
    for (let i = 0, p = 0; i < n; i++, p += 3) out[i] = tones[((d.data[p] ?? 0) * 299 + (d.data[p + 1] ?? 0) * 587 + (d.data[p + 2] ?? 0) * 114 + 500) / 1000 | 0] ?? 0;
  }
  return sharp(out, { raw: { width: d.width, height: d.height, channels } }).webp({ lossless: true, effort: FLAT_ENCODING.effort }).toBuffer();
}

/** The master's own pixels, exactly: as lossless WebP when that is smaller, else the master's bytes. */
async function exact(d: Decoded & { master: Buffer }): Promise<{ body: Buffer; encoding: VariantEncoding }> {
  const lossless = await sharp(d.data, { raw: { width: d.width, height: d.height, channels: d.channels } }).webp({ lossless: true, effort: FLAT_ENCODING.effort }).toBuffer();
  return lossless.length < d.master.length ? { body: lossless, encoding: "lossless" } : { body: d.master, encoding: "master" };
}

/**
 * The page's pixels encoded as `format`. For WebP, a drawn page flat when that measures smaller
 * (FLAT_CHOICE), else lossy by its class's encoding (PAGE_ENCODINGS); a photograph stays JPEG
 * (PHOTOGRAPH). At the master's own width every lossy encoding is a second generation, under the
 * master's own SSIM on every page it was measured on (scans, the cover, the photograph): there a
 * page that is not flat gets the master's exact pixels (`exact`). The bytes answered may
 * therefore be a JPEG for a browser that asked for WebP (`imageFormatOf` tells). `webpQuality`
 * forces lossy WebP at that quality (the bench's search).
 */
export async function encodeVariant(d: Decoded, format: VariantFormat, webpQuality?: number): Promise<{ body: Buffer; encoding: VariantEncoding }> {
  const enc = { ...PAGE_ENCODINGS[d.pageClass], ...(webpQuality === undefined ? {} : { webpQuality }) };
  const img = () => {
    const raw = sharp(d.data, { raw: { width: d.width, height: d.height, channels: d.channels } });
    return enc.grey && d.channels === 3 ? raw.toColourspace("b-w") : raw;
  };
  if (format === "jpeg") return { body: await img().jpeg({ quality: FALLBACK_JPEG_QUALITY }).toBuffer(), encoding: "jpeg" };
  const lossy = async (): Promise<{ body: Buffer; encoding: VariantEncoding }> => ({ body: await img().webp({ quality: enc.webpQuality, preset: enc.preset }).toBuffer(), encoding: "lossy" });
  if (webpQuality !== undefined) return lossy();
  const { master } = d;
  if (isPhotograph(d)) return master ? { body: master, encoding: "master" } : { body: await img().jpeg({ quality: PHOTOGRAPH.jpegQuality }).toBuffer(), encoding: "jpeg" };
  const otherwise = master ? () => exact({ ...d, master }) : lossy;
  if (!flatCandidate(d)) return otherwise();
  const flat = { body: await flatWebp(d, enc.grey), encoding: "flat" as const };
  const share = flat.body.length / d.baseBytes;
  if (share <= FLAT_CHOICE.keepUnder) return flat;
  if (share > FLAT_CHOICE.dropOver) return otherwise();
  const other = await otherwise();
  return flat.body.length <= FLAT_CHOICE.lossyShare * other.body.length ? flat : other;
}

/**
 * The master's pixels at `width`, judged (class, plain share) at the master's own width whatever
 * the width made: smaller renderings blur text into mid tones (at 200 px every line is a grey
 * smudge), and one judgement per page keeps a page's variants alike however they are made.
 */
async function rendering(master: Buffer, width: number): Promise<Decoded> {
  return atWidth(await decode(master, PAGE_WIDTHS.read), width);
}

/** The master's full rendering at `width`: itself at its own width (never enlarged), else resized. */
function atWidth(full: Decoded, width: number): Promise<Decoded> | Decoded {
  return width >= full.width ? full : decodeRaw(full, width);
}

/** One variant of a page from its master image: what a first request for it makes. */
export async function variantOfMaster(master: Buffer, width: number, format: VariantFormat, webpQuality?: number): Promise<{ body: Buffer; pageClass: PageClass; encoding: VariantEncoding }> {
  const d = await rendering(master, width);
  return { ...(await encodeVariant(d, format, webpQuality)), pageClass: d.pageClass };
}

export interface PageVariantsOptions {
  /** Variants made at once (each is a decode, a resize and an encode: about 10–60 ms of one core). */
  concurrency?: number;
}

export interface PageVariants {
  /**
   * Page `page` of the blob set `blobId` at `width` px in `format`; undefined when the document has
   * no master for it (not rendered, or deleted meanwhile).
   */
  get(blobId: string, page: number, width: VariantWidth, format: VariantFormat): Promise<PageImage | undefined>;
  /**
   * Makes and stores every WebP variant of one page that is not stored yet, and those at the
   * widths in `replace` even when stored (`quire pages reencode --force`: a variant of an earlier
   * encoder made again, put over the old one whole); false when the page has no master.
   */
  makeAll(blobId: string, page: number, replace?: readonly VariantWidth[]): Promise<boolean>;
  /** Variants not started yet are not made; resolves once the ones being made are stored (a server closing). */
  close(): Promise<void>;
}

export function pageVariants(blobs: BlobStore, opts: PageVariantsOptions = {}): PageVariants {
  const limit = Math.max(1, opts.concurrency ?? 2);
  let running = 0;
  const waiting: Array<() => void> = [];
  /** At most `limit` variants are made at once; the rest wait their turn. */
  let closed = false;
  const gated = async <T>(fn: () => Promise<T>, ifClosed: T): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    // A request whose server is closing (its reader gone) must not write into a store being put away.
    if (closed) {
      waiting.shift()?.();
      return ifClosed;
    }
    running++;
    try {
      return await fn();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
  /** A variant being made: a second request for it waits for the same work. */
  const inFlight = new Map<string, Promise<Buffer | undefined>>();

  const read = async (key: string): Promise<Buffer | undefined> => {
    try {
      return await readAll(await blobs.get(key));
    } catch (err) {
      if ((err as { code?: string } | undefined)?.code === "ENOENT") return undefined;
      throw err;
    }
  };
  const store = async (key: string, body: Buffer) => {
    // A variant that could not be stored (a full disk) is still answered; it is made again next time.
    await blobs.put(key, Readable.from([body])).catch(() => undefined);
  };
  const masterKey = (blobId: string, page: number) => blobKeys.page(blobId, page, "read", "jpg");

  const make = (blobId: string, page: number, width: VariantWidth, format: VariantFormat): Promise<Buffer | undefined> => {
    const key = blobKeys.pageVariant(blobId, page, width, VARIANT_EXTENSION[format]);
    const pending = inFlight.get(key);
    if (pending) return pending;
    const work = (async () => {
      const stored = await read(key);
      if (stored) return stored;
      return gated(async () => {
        const master = await read(masterKey(blobId, page));
        if (!master) return undefined;
        const { body } = await variantOfMaster(master, width, format);
        await store(key, body);
        return body;
      }, undefined);
    })().finally(() => inFlight.delete(key));
    inFlight.set(key, work);
    return work;
  };

  return {
    async get(blobId, page, width, format) {
      // The masters are what they always were: a JPEG at their own width is the master itself.
      if (format === "jpeg" && width === PAGE_WIDTHS.read) {
        const body = await read(masterKey(blobId, page));
        return body && { body, format };
      }
      const body = await make(blobId, page, width, format);
      return body && { body, format: imageFormatOf(body) };
    },

    async makeAll(blobId, page, replace = []) {
      const missing: VariantWidth[] = [];
      for (const w of ALL_VARIANT_WIDTHS) if (replace.includes(w) || !(await blobs.exists(blobKeys.pageVariant(blobId, page, w, "webp")))) missing.push(w);
      if (missing.length === 0) return (await blobs.exists(masterKey(blobId, page)));
      return gated(async () => {
        const master = await read(masterKey(blobId, page));
        if (!master) return false;
        // One decode at full size, one class for every width.
        const full = await decode(master, PAGE_WIDTHS.read);
        for (const w of missing) {
          const d = await atWidth(full, w);
          await store(blobKeys.pageVariant(blobId, page, w, "webp"), (await encodeVariant(d, "webp")).body);
        }
        return true;
      }, false);
    },

    async close() {
      closed = true;
      while (waiting.length > 0) waiting.shift()?.();
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}

/** `full` resized to `width` (raw in, raw out: no second decode of the master). */
async function decodeRaw(full: Decoded, width: number): Promise<Decoded> {
  const { data, info } = await sharp(full.data, { raw: { width: full.width, height: full.height, channels: full.channels } })
    .resize({ width })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { master: _master, ...traits } = full;
  return { ...traits, data, width: info.width, height: info.height, baseBytes: full.baseBytes * (info.width / full.width) ** 2 };
}
