/**
 * Windows/OS2 bitmaps to raw pixels. libvips as sharp ships it cannot read BMP, and no BMP decoder
 * is among our dependencies; the format's common forms are simple enough to read here: 1/4/8-bit
 * palettes, 16/24/32-bit with or without bit-field masks, bottom-up or top-down. Run-length
 * compressed bitmaps (RLE4/RLE8) and embedded JPEG/PNG are refused as unsupported.
 */

export interface RawImage {
  width: number;
  height: number;
  channels: 3 | 4;
  /** Top-down rows, RGB or RGBA, 8 bits per sample. */
  data: Buffer;
}

export class BmpError extends Error {
  readonly reason: "corrupt" | "unsupported" | "limits";
  constructor(reason: BmpError["reason"], message: string) {
    super(message);
    this.name = "BmpError";
    this.reason = reason;
  }
}

const BI_RGB = 0;
const BI_BITFIELDS = 3;
const BI_ALPHABITFIELDS = 6;

export function decodeBmp(file: Buffer, maxPixels: number): RawImage {
  if (file.length < 26 || file.toString("latin1", 0, 2) !== "BM") throw new BmpError("corrupt", "not a BMP file");
  const pixelOffset = file.readUInt32LE(10);
  const headerSize = file.readUInt32LE(14);
  const core = headerSize === 12;
  if (!core && headerSize < 40) throw new BmpError("unsupported", `BMP header of ${headerSize} bytes`);
  if (file.length < 14 + headerSize) throw new BmpError("corrupt", "BMP header cut short");
  const width = core ? file.readUInt16LE(18) : file.readInt32LE(18);
  const rawHeight = core ? file.readInt16LE(20) : file.readInt32LE(22);
  const bpp = core ? file.readUInt16LE(24) : file.readUInt16LE(28);
  const compression = core ? BI_RGB : file.readUInt32LE(30);
  const topDown = rawHeight < 0;
  const height = Math.abs(rawHeight);
  if (width <= 0 || height <= 0) throw new BmpError("corrupt", "BMP without pixels");
  if (width * height > maxPixels) throw new BmpError("limits", `BMP of ${width}x${height} pixels`);
  if (compression !== BI_RGB && compression !== BI_BITFIELDS && compression !== BI_ALPHABITFIELDS) {
    throw new BmpError("unsupported", `BMP compression ${compression}`);
  }

  const masks = bitMasks(file, headerSize, bpp, compression);
  const palette = bpp <= 8 ? readPalette(file, headerSize, core, bpp) : [];
  const stride = Math.ceil((width * bpp) / 32) * 4;
  if (pixelOffset + stride * height > file.length) throw new BmpError("corrupt", "BMP pixel data cut short");

  const channels = masks?.alpha ? 4 : 3;
  const out = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y++) {
    const row = pixelOffset + (topDown ? y : height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * channels;
      if (bpp <= 8) {
        const bitPos = x * bpp;
        const byte = file[row + (bitPos >> 3)] ?? 0;
        const index = (byte >> (8 - bpp - (bitPos & 7))) & ((1 << bpp) - 1);
        const colour = palette[index] ?? [0, 0, 0];
        out[at] = colour[0];
        out[at + 1] = colour[1];
        out[at + 2] = colour[2];
      } else if (masks) {
        const value = bpp === 16 ? file.readUInt16LE(row + x * 2) : file.readUInt32LE(row + x * 4);
        out[at] = masks.red(value);
        out[at + 1] = masks.green(value);
        out[at + 2] = masks.blue(value);
        if (masks.alpha) out[at + 3] = masks.alpha(value);
      } else if (bpp === 24) {
        const p = row + x * 3;
        out[at] = file[p + 2] ?? 0;
        out[at + 1] = file[p + 1] ?? 0;
        out[at + 2] = file[p] ?? 0;
      }
    }
  }
  return { width, height, channels, data: out };
}

type Channel = (value: number) => number;

/** Extracts one channel as 0-255 from a packed pixel, whatever the mask's width. */
function channel(mask: number): Channel | undefined {
  if (mask === 0) return undefined;
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  const max = mask >>> shift;
  return (value) => Math.round((((value & mask) >>> shift) * 255) / max);
}

function bitMasks(file: Buffer, headerSize: number, bpp: number, compression: number): { red: Channel; green: Channel; blue: Channel; alpha?: Channel } | null {
  if (bpp <= 8 || bpp === 24) {
    if (compression !== BI_RGB) throw new BmpError("unsupported", `BMP bit fields with ${bpp} bits per pixel`);
    return null;
  }
  if (bpp !== 16 && bpp !== 32) throw new BmpError("unsupported", `BMP with ${bpp} bits per pixel`);
  let red: number, green: number, blue: number, alpha = 0;
  if (compression === BI_RGB) {
    // The defaults: 5-5-5 for 16 bits, 8-8-8 (the fourth byte unused) for 32.
    [red, green, blue] = bpp === 16 ? [0x7c00, 0x03e0, 0x001f] : [0xff0000, 0x00ff00, 0x0000ff];
  } else {
    // V2+ headers hold the masks; a 40-byte header is followed by them.
    const at = 14 + 40;
    if (file.length < at + 12) throw new BmpError("corrupt", "BMP bit masks cut short");
    [red, green, blue] = [file.readUInt32LE(at), file.readUInt32LE(at + 4), file.readUInt32LE(at + 8)];
    if ((headerSize >= 56 || compression === BI_ALPHABITFIELDS) && file.length >= at + 16) alpha = file.readUInt32LE(at + 12);
  }
  const r = channel(red);
  const g = channel(green);
  const b = channel(blue);
  if (!r || !g || !b) throw new BmpError("corrupt", "BMP bit mask without bits");
  return { red: r, green: g, blue: b, alpha: channel(alpha) };
}

function readPalette(file: Buffer, headerSize: number, core: boolean, bpp: number): Array<[number, number, number]> {
  if (![1, 4, 8].includes(bpp)) throw new BmpError("unsupported", `BMP with ${bpp} bits per pixel`);
  const entrySize = core ? 3 : 4;
  const declared = core ? 0 : file.readUInt32LE(46);
  const count = Math.min(declared || 1 << bpp, 1 << bpp);
  const start = 14 + headerSize;
  const palette: Array<[number, number, number]> = [];
  for (let i = 0; i < count; i++) {
    const p = start + i * entrySize;
    if (p + 3 > file.length) throw new BmpError("corrupt", "BMP palette cut short");
    palette.push([file[p + 2] ?? 0, file[p + 1] ?? 0, file[p] ?? 0]);
  }
  return palette;
}
