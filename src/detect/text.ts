/**
 * Plain text, decided on a sample from the start of the file. The rule:
 * - a UTF-16 (LE or BE) or UTF-8 byte-order mark names the encoding, which must then decode cleanly;
 * - without one, a NUL byte means binary (UTF-16 without a BOM is not guessed); the sample is UTF-8 if
 *   it decodes as UTF-8, else it is read as Windows-1252 (a superset of ISO-8859-1's printable part),
 *   as long as at most 30% of its characters are not ASCII (Latin-1 text has a few per cent; a
 *   Greek or Cyrillic code page, or binary data, has far more and would only come out as mojibake);
 * - the decoded text may hold no NUL, and at most one other control character per 100 characters
 *   (tab, line feed, carriage return and form feed are not counted): binary junk is full of them;
 * - it must hold something to show: at least one character that is not white space.
 */

export type TextEncoding = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252";

export interface TextSample {
  encoding: TextEncoding;
  /** Bytes to skip before decoding (a byte-order mark). */
  bomLength: number;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const CONTROLS_PER_CHAR = 1 / 100;
const MAX_LEGACY_NON_ASCII = 0.3;

/**
 * `sample` is the first bytes of the file; `complete` says whether it is the whole file (a sample
 * cut short may end inside a multi-byte character, which is not an error).
 */
export function detectText(sample: Buffer, complete: boolean): TextSample | null {
  const bom = byteOrderMark(sample);
  if (!bom && sample.includes(0)) return null;
  const candidates: TextSample[] = bom ? [bom] : [{ encoding: "utf-8", bomLength: 0 }, { encoding: "windows-1252", bomLength: 0 }];
  for (const candidate of candidates) {
    const text = decode(sample.subarray(candidate.bomLength), candidate.encoding, complete);
    if (text === null) continue;
    if (candidate.encoding === "windows-1252" && nonAsciiShare(sample) > MAX_LEGACY_NON_ASCII) return null;
    return looksLikeText(text) ? candidate : null;
  }
  return null;
}

/**
 * Windows-1252's characters at 0x80-0x9F (where ISO-8859-1 has C1 controls); its five unassigned
 * positions stay controls. Written out because Node's TextDecoder decodes the label
 * "windows-1252" as ISO-8859-1 (nodejs/node#56542).
 */
const CP1252_HIGH = "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function decodeWindows1252(bytes: Buffer): string {
  let text = "";
  for (let start = 0; start < bytes.length; start += 8192) {
    const chunk = bytes.subarray(start, start + 8192);
    text += String.fromCharCode(...chunk.map((b) => b)).replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80] ?? c);
  }
  return text;
}

/** Decodes a whole text file or a sample of it; null if the bytes are not valid in that encoding. */
export function decode(bytes: Buffer, encoding: TextEncoding, complete = true): string | null {
  if (encoding === "windows-1252") return decodeWindows1252(bytes);
  let body = bytes;
  if (!complete) body = body.subarray(0, body.length - cutTail(body, encoding));
  try {
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return null;
  }
}

function byteOrderMark(sample: Buffer): TextSample | null {
  if (UTF8_BOM.every((b, i) => sample[i] === b)) return { encoding: "utf-8", bomLength: 3 };
  if (sample[0] === 0xff && sample[1] === 0xfe) return { encoding: "utf-16le", bomLength: 2 };
  if (sample[0] === 0xfe && sample[1] === 0xff) return { encoding: "utf-16be", bomLength: 2 };
  return null;
}

/** How many bytes at the end of a cut sample may belong to a character the cut split. */
function cutTail(bytes: Buffer, encoding: TextEncoding): number {
  if (encoding === "windows-1252") return 0;
  if (encoding === "utf-8") {
    // Back up over continuation bytes to the lead byte of the last character, if it is incomplete.
    for (let back = 1; back <= Math.min(4, bytes.length); back++) {
      const byte = bytes[bytes.length - back] ?? 0;
      if ((byte & 0xc0) === 0x80) continue;
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return need > back ? back : 0;
    }
    return 0;
  }
  // UTF-16: an odd byte, then a lone high surrogate at the very end.
  const odd = bytes.length % 2;
  const end = bytes.length - odd;
  if (end < 2) return odd;
  const unit = encoding === "utf-16le" ? bytes.readUInt16LE(end - 2) : bytes.readUInt16BE(end - 2);
  return odd + (unit >= 0xd800 && unit <= 0xdbff ? 2 : 0);
}

function nonAsciiShare(bytes: Buffer): number {
  let high = 0;
  for (const byte of bytes) if (byte >= 0x80) high++;
  return bytes.length === 0 ? 0 : high / bytes.length;
}

function looksLikeText(text: string): boolean {
  let controls = 0;
  let visible = false;
  let chars = 0;
  for (const ch of text) {
    chars++;
    const code = ch.codePointAt(0) ?? 0;
    if (code === 0) return false;
    if (isControl(code)) controls++;
    else if (!visible && !/\s/u.test(ch)) visible = true;
  }
  return visible && controls <= Math.floor(chars * CONTROLS_PER_CHAR);
}

function isControl(code: number): boolean {
  if (code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c) return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}
