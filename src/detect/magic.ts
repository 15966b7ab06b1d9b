import type { OrgDocType } from "../domain/formats.ts";

/**
 * Formats recognised by the bytes at the start of the file. A header that is cut short is nothing:
 * each check needs the whole fixed part of its header, not only the first few bytes.
 */

export const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
export const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Acrobat accepts a header anywhere in the first KiB, and real files do carry junk before it. */
const PDF_WINDOW = 1024;
const PDF_MAGIC = Buffer.from("%PDF-", "latin1");
const WPC_MAGIC = Buffer.from([0xff, 0x57, 0x50, 0x43]);
const RTF_MAGIC = Buffer.from("{\\rtf", "latin1");
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

type Check = (head: Buffer, size: number) => boolean;

/** In order: the first match wins. Images and binary documents first, then the text-based RTF and PDF. */
const CHECKS: ReadonlyArray<readonly [OrgDocType, Check]> = [
  ["wpd", isWordPerfect],
  ["doc", isPreOleWord],
  ["xls", isOldExcel],
  ["jpg", isJpeg],
  ["png", isPng],
  ["gif", isGif],
  ["tif", isTiff],
  ["bmp", isBmp],
  ["webp", isWebp],
  ["rtf", isRtf],
  ["pdf", (head) => head.subarray(0, PDF_WINDOW).indexOf(PDF_MAGIC) !== -1],
];

export function detectMagic(head: Buffer, size: number): OrgDocType | null {
  return CHECKS.find(([, check]) => check(head, size))?.[0] ?? null;
}

/**
 * Starts of binary formats. A file that begins like one of them but did not pass its check (a
 * header cut short) is a broken file of that format, never text, however printable its bytes are.
 */
const BINARY_PREFIXES: ReadonlyArray<readonly number[]> = [
  [0xff, 0xd8, 0xff], [0x89, 0x50, 0x4e, 0x47], [0x47, 0x49, 0x46, 0x38], [0x49, 0x49, 0x2a, 0x00], [0x4d, 0x4d, 0x00, 0x2a],
  [0x49, 0x49, 0x2b, 0x00], [0x4d, 0x4d, 0x00, 0x2b], [0x52, 0x49, 0x46, 0x46], [0xff, 0x57, 0x50, 0x43], [0xd0, 0xcf, 0x11, 0xe0], [0x50, 0x4b, 0x03, 0x04],
];

export function hasBinaryPrefix(head: Buffer): boolean {
  return BINARY_PREFIXES.some((prefix) => prefix.every((b, i) => i >= head.length || head[i] === b) && head.length >= Math.min(2, prefix.length));
}

export function startsWith(buf: Buffer, magic: Buffer | readonly number[], at = 0): boolean {
  const bytes = Buffer.isBuffer(magic) ? magic : Buffer.from(magic);
  return buf.length >= at + bytes.length && buf.subarray(at, at + bytes.length).equals(bytes);
}

/** WordPerfect 5.x/6.x+ (DOS, Windows, Mac): the `\xFFWPC` prefix, then a file type at offset 9. */
function isWordPerfect(head: Buffer): boolean {
  // Other WPC files are graphics, macros, printer drivers...; 0x0A is a document, 0x2C a WordPerfect for Mac 3.x one.
  return startsWith(head, WPC_MAGIC) && head.length >= 16 && (head[9] === 0x0a || head[9] === 0x2c);
}

/**
 * Word files from before OLE2: Word for Windows 1.x/2.x (the FIB's wIdent is the first word of the
 * file) and Word for Macintosh 4.0/5.x (0xFE37 then the version).
 */
function isPreOleWord(head: Buffer): boolean {
  if (head.length < 4) return false;
  if (head[1] === 0xa5 && (head[0] === 0xdb || head[0] === 0x9b)) return true;
  return head[0] === 0xfe && head[1] === 0x37 && head[2] === 0x00 && (head[3] === 0x1c || head[3] === 0x23);
}

/** Excel 2.x-4.0 (BIFF2-4) worksheets and 4.0 workbooks: a bare BOF record, before Excel used OLE2. */
function isOldExcel(head: Buffer): boolean {
  if (head.length < 8 || head[0] !== 0x09 || ![0x00, 0x02, 0x04].includes(head[1] ?? -1)) return false;
  const length = head.readUInt16LE(2);
  const docType = head.readUInt16LE(6);
  return length >= 4 && length <= 16 && (docType === 0x0010 || docType === 0x0100);
}

/** SOI, then a marker: APPn, DQT, DHT, SOFn, COM (what encoders put first). */
function isJpeg(head: Buffer): boolean {
  if (!startsWith(head, [0xff, 0xd8, 0xff]) || head.length < 4) return false;
  const marker = head[3] ?? 0;
  return marker >= 0xc0 && marker <= 0xfe;
}

/** Signature, then a complete IHDR chunk (length 13) with a non-zero size. */
function isPng(head: Buffer): boolean {
  if (!startsWith(head, PNG_MAGIC) || head.length < 33) return false;
  if (head.readUInt32BE(8) !== 13 || head.toString("latin1", 12, 16) !== "IHDR") return false;
  return head.readUInt32BE(16) > 0 && head.readUInt32BE(20) > 0;
}

/** GIF87a/GIF89a and the whole logical screen descriptor. */
function isGif(head: Buffer): boolean {
  const sig = head.toString("latin1", 0, 6);
  return (sig === "GIF87a" || sig === "GIF89a") && head.length >= 13;
}

/** Classic TIFF (II*\0 / MM\0*) with a first IFD inside the file, or BigTIFF (II+\0 / MM\0+). */
function isTiff(head: Buffer, size: number): boolean {
  if (head.length < 8) return false;
  const le = startsWith(head, [0x49, 0x49]);
  if (!le && !startsWith(head, [0x4d, 0x4d])) return false;
  const version = le ? head.readUInt16LE(2) : head.readUInt16BE(2);
  if (version === 42) {
    const ifd = le ? head.readUInt32LE(4) : head.readUInt32BE(4);
    return ifd >= 8 && ifd + 2 <= size;
  }
  if (version === 43 && head.length >= 16) {
    const offsetSize = le ? head.readUInt16LE(4) : head.readUInt16BE(4);
    const ifd = le ? head.readBigUInt64LE(8) : head.readBigUInt64BE(8);
    return offsetSize === 8 && ifd >= 16n && ifd + 8n <= BigInt(size);
  }
  return false;
}

/** "BM" alone would match text; the DIB header's size must be one of the known header versions. */
function isBmp(head: Buffer): boolean {
  if (!startsWith(head, [0x42, 0x4d]) || head.length < 26) return false;
  return [12, 40, 52, 56, 64, 108, 124].includes(head.readUInt32LE(14));
}

/** RIFF....WEBP with a VP8, VP8L or VP8X first chunk. */
function isWebp(head: Buffer): boolean {
  if (head.length < 16 || head.toString("latin1", 0, 4) !== "RIFF" || head.toString("latin1", 8, 12) !== "WEBP") return false;
  return ["VP8 ", "VP8L", "VP8X"].includes(head.toString("latin1", 12, 16));
}

function isRtf(head: Buffer): boolean {
  let i = startsWith(head, UTF8_BOM) ? UTF8_BOM.length : 0;
  while (i < head.length && isAsciiSpace(head[i] ?? 0)) i++;
  return startsWith(head.subarray(i), RTF_MAGIC);
}

function isAsciiSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0x0c;
}
