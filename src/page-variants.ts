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
  ALL_VARIANT_WIDTHS, classifyPage, FALLBACK_JPEG_QUALITY, PAGE_ENCODINGS, PAGE_WIDTHS, VARIANT_EXTENSION, type PageClass, type VariantFormat, type VariantWidth,
} from "./domain/page-images.ts";

export interface PageImage {
  body: Buffer;
  format: VariantFormat;
}

/** Pixels of a page at one width, and what class of page they show. */
export interface Decoded {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 3;
  pageClass: PageClass;
}

/** Every 7th pixel is enough to tell colour and mid tones apart, at a seventh of the cost. */
function sampled(data: Buffer, channels: number): Uint8Array {
  const step = 7;
  const n = Math.floor(data.length / channels / step);
  const out = new Uint8Array(n * channels);
  for (let i = 0; i < n; i++) for (let c = 0; c < channels; c++) out[i * channels + c] = data[i * step * channels + c] ?? 0;
  return out;
}

/** The master decoded at `width` (a JPEG shrinks on load, so a small width costs little). */
async function decode(master: Buffer, width: number, pageClass?: PageClass): Promise<Decoded> {
  // The master's pixel area was bounded when it was rendered (maxPagePixels).
  // fastShrinkOnLoad off: a JPEG shrunk while decoded (1/2, 1/4) loses fine text at 400 px (SSIM 0.97 where a plain resize keeps 0.99).
  const { data, info } = await sharp(master, { limitInputPixels: false }).resize({ width, withoutEnlargement: true, fastShrinkOnLoad: false }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const channels = info.channels === 1 ? 1 : 3;
  return { data, width: info.width, height: info.height, channels, pageClass: pageClass ?? classifyPage(sampled(data, channels), channels) };
}

/** The page's pixels encoded as `format`, by its class's encoding (PAGE_ENCODINGS; `webpQuality` overrides it, for the bench's search). */
export async function encodeVariant(d: Decoded, format: VariantFormat, webpQuality?: number): Promise<Buffer> {
  const enc = { ...PAGE_ENCODINGS[d.pageClass], ...(webpQuality === undefined ? {} : { webpQuality }) };
  let img = sharp(d.data, { raw: { width: d.width, height: d.height, channels: d.channels } });
  if (enc.grey && d.channels === 3) img = img.toColourspace("b-w");
  return format === "webp"
    ? img.webp({ quality: enc.webpQuality, preset: enc.preset }).toBuffer()
    : img.jpeg({ quality: FALLBACK_JPEG_QUALITY }).toBuffer();
}

/** One variant of a page from its master image: what a first request for it makes. */
export async function variantOfMaster(master: Buffer, width: number, format: VariantFormat, webpQuality?: number): Promise<{ body: Buffer; pageClass: PageClass }> {
  // Small widths are judged at CLASS_WIDTH: at 200 px every line of text is a grey smudge.
  const pageClass = width < CLASS_WIDTH ? (await decode(master, CLASS_WIDTH)).pageClass : undefined;
  const d = await decode(master, width, pageClass);
  return { body: await encodeVariant(d, format, webpQuality), pageClass: d.pageClass };
}

/** The class of a page, found from its master at the width it is judged at (small renderings blur text into mid tones). */
const CLASS_WIDTH = 600;

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
  /** Makes and stores every WebP variant of one page that is not stored yet; false when it has no master. */
  makeAll(blobId: string, page: number): Promise<boolean>;
}

export function pageVariants(blobs: BlobStore, opts: PageVariantsOptions = {}): PageVariants {
  const limit = Math.max(1, opts.concurrency ?? 2);
  let running = 0;
  const waiting: Array<() => void> = [];
  /** At most `limit` variants are made at once; the rest wait their turn. */
  const gated = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
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
      });
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
      return body && { body, format };
    },

    async makeAll(blobId, page) {
      const missing: VariantWidth[] = [];
      for (const w of ALL_VARIANT_WIDTHS) if (!(await blobs.exists(blobKeys.pageVariant(blobId, page, w, "webp")))) missing.push(w);
      if (missing.length === 0) return (await blobs.exists(masterKey(blobId, page)));
      return gated(async () => {
        const master = await read(masterKey(blobId, page));
        if (!master) return false;
        // One decode at full size, one class for every width.
        const full = await decode(master, PAGE_WIDTHS.read);
        for (const w of missing) {
          const d = w >= full.width ? full : await decodeRaw(full, w);
          await store(blobKeys.pageVariant(blobId, page, w, "webp"), await encodeVariant(d, "webp"));
        }
        return true;
      });
    },
  };
}

/** `full` resized to `width` (raw in, raw out: no second decode of the master). */
async function decodeRaw(full: Decoded, width: number): Promise<Decoded> {
  const { data, info } = await sharp(full.data, { raw: { width: full.width, height: full.height, channels: full.channels } })
    .resize({ width })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: full.channels, pageClass: full.pageClass };
}
