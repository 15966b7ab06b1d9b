/**
 * Splits the output of `pdftoppm` without a file prefix (every page as a binary PPM, one after the
 * other, on stdout) into pages of raw RGB pixels: the pages as poppler draws them, for the format
 * comparison. (The pipeline itself does not stream pixels: on our machines moving 5.6 MB a page
 * through a pipe cost more CPU than poppler's JPEG encoding; docs/scaling.md, "Page rendering cost".)
 */
import type { Readable } from "node:stream";

export interface RawPage {
  width: number;
  height: number;
  /** width × height × 3 bytes, RGB, rows top to bottom. */
  pixels: Buffer;
}

/** "P6", width, height, maxval, each after whitespace, then exactly one whitespace byte. */
const HEADER = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/;
/** A header is a few dozen bytes; more without a match is not a PPM. */
const HEADER_MAX = 64;

export class PpmStreamError extends Error {}

/**
 * Yields each page of `stream` in order. Throws PpmStreamError on anything that is not a sequence of
 * 8-bit P6 images, on a page over `maxPixels`, and on output that ends inside a page.
 */
export async function* ppmPages(stream: Readable, maxPixels: number): AsyncGenerator<RawPage> {
  let pending: Buffer = Buffer.alloc(0);
  let page: { width: number; height: number; pixels: Buffer; filled: number } | undefined;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    pending = Buffer.alloc(0);
    while (data.length > 0) {
      if (!page) {
        const head = HEADER.exec(data.subarray(0, HEADER_MAX).toString("latin1"));
        if (!head) {
          if (data.length >= HEADER_MAX || !/^P?6?\s*\d*\s*\d*\s*\d*$/.test(data.toString("latin1"))) throw new PpmStreamError("not a PPM image");
          pending = data; // a header cut between two chunks
          break;
        }
        const [width, height, maxval] = [Number(head[1]), Number(head[2]), Number(head[3])];
        if (maxval !== 255) throw new PpmStreamError(`unexpected PPM depth (maxval ${maxval})`);
        if (!(width > 0 && height > 0) || width * height > maxPixels) throw new PpmStreamError(`PPM page of ${width}×${height} pixels is out of bounds`);
        page = { width, height, pixels: Buffer.allocUnsafe(width * height * 3), filled: 0 };
        data = data.subarray(head[0].length);
        continue;
      }
      const take = Math.min(data.length, page.pixels.length - page.filled);
      data.copy(page.pixels, page.filled, 0, take);
      page.filled += take;
      data = data.subarray(take);
      if (page.filled === page.pixels.length) {
        const { width, height, pixels } = page;
        page = undefined;
        yield { width, height, pixels };
      }
    }
  }
  if (page || pending.length > 0) throw new PpmStreamError("the PPM output ended inside a page");
}
