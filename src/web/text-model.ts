/**
 * What the public pages keep of a document's text: each page's text bounded (per page and per
 * document), escaped once for the HTML, folded once for search, and its text-layer JSON serialized
 * once. Built from the pipeline's text.json by `buildTextModel`, a pure function that a worker
 * thread runs for large blobs (text-worker.ts), so the event loop never parses a whole document.
 */
import { escapeText } from "./html.ts";

export interface TextBounds {
  /** Characters kept per page; the words past it are dropped. */
  maxPageChars: number;
  /** Characters kept per document; pages past it keep no text. */
  maxDocumentChars: number;
}

export interface TextModel {
  /** Per page (index page - 1): the bounded text, lines separated by "\n". */
  text: string[];
  /** The same, escaped for HTML text. */
  html: string[];
  /** The same, whitespace collapsed, accents and case folded (see foldForSearch). */
  folded: string[];
  /** Every page's `{page, text, words}` JSON, one after the other; page n is json[offsets[n-1]..offsets[n]). */
  json: Uint8Array;
  offsets: number[];
  /** Characters of text kept in all (after the bounds). */
  chars: number;
}

/** Lowercased, accents folded: "Été" finds "ete". The browser bundle folds the same way. */
export function foldForSearch(s: string): string {
  return s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

interface Word {
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

const isWord = (w: unknown): w is Word => {
  const o = w as Word | null;
  return typeof o === "object" && o !== null && typeof o.text === "string" &&
    [o.x, o.y, o.w, o.h].every((v) => typeof v === "number" && Number.isFinite(v));
};

/** `s` cut to at most `max` characters, at the last whitespace when there is one in the second half. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const space = s.slice(0, max + 1).search(/\s\S*$/);
  let end = space >= max / 2 ? space : max;
  if (/[\uD800-\uDBFF]/.test(s[end - 1] ?? "")) end--; // never half a surrogate pair
  return s.slice(0, end);
}

/**
 * Calls `each` with every stored page, parsed one at a time: the pipeline writes `JSON.stringify` of
 * `[{page, text, words}, …]`, where `},{"page":` can only stand between two pages (a quote inside a
 * string is escaped), so a whole document is never parsed at once. Anything else is parsed whole.
 * A page may come twice (parsed whole after a damaged piece): the caller keeps the first.
 */
function forEachStoredPage(raw: Uint8Array, each: (page: unknown) => void): void {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const decoder = new TextDecoder();
  const parsed = (from: number, to: number): unknown => JSON.parse(decoder.decode(bytes.subarray(from, to)));
  const whole = () => {
    let all: unknown;
    try {
      all = parsed(0, bytes.length);
    } catch {
      return;
    }
    for (const p of Array.isArray(all) ? all : []) each(p);
  };
  const end = bytes.lastIndexOf("]");
  if (bytes.indexOf('[{"page":') !== 0 || end < 0 || bytes.subarray(end + 1).toString().trim() !== "") return whole();
  let damaged = false;
  for (let from = 1; from < end; ) {
    const next = bytes.indexOf('},{"page":', from);
    const to = next < 0 || next > end ? end : next + 1;
    try {
      each(parsed(from, to));
    } catch {
      damaged = true;
    }
    from = to + 1;
  }
  // Written some other way (spaces between pages): parsed whole after all; pages already taken stay.
  if (damaged) whole();
}

/**
 * The model of a stored text.json (an array of `{page, text, words}`), for a document of
 * `pageCount` pages. Anything not of that shape (a blob written by an older version, damaged) counts
 * as no text for its page; pages beyond `pageCount` are ignored. Bounds apply in the stored order.
 */
export function buildTextModel(raw: Uint8Array, pageCount: number, bounds: TextBounds): TextModel {
  const text: string[] = new Array<string>(pageCount).fill("");
  const json: Array<Uint8Array | undefined> = new Array<Uint8Array | undefined>(pageCount);
  const encoder = new TextEncoder();
  let chars = 0;
  forEachStoredPage(raw, (p) => {
    const o = p as { page?: unknown; text?: unknown; words?: unknown } | null;
    if (typeof o !== "object" || o === null || typeof o.page !== "number" || !Number.isInteger(o.page)) return;
    const n = o.page;
    if (n < 1 || n > pageCount || json[n - 1] !== undefined) return;
    const budget = Math.max(0, Math.min(bounds.maxPageChars, bounds.maxDocumentChars - chars));
    const kept = cut(typeof o.text === "string" ? o.text : "", budget);
    const words: Word[] = [];
    let used = 0;
    for (const w of Array.isArray(o.words) ? (o.words as unknown[]) : []) {
      if (!isWord(w)) continue;
      used += w.text.length + 1;
      if (used > budget) break;
      words.push({ text: w.text, x: w.x, y: w.y, w: w.w, h: w.h });
    }
    chars += kept.length;
    text[n - 1] = kept;
    json[n - 1] = encoder.encode(JSON.stringify({ page: n, text: kept, words }));
  });

  const model: TextModel = { text, html: [], folded: [], json: new Uint8Array(0), offsets: [0], chars };
  let total = 0;
  for (let n = 1; n <= pageCount; n++) {
    json[n - 1] ??= encoder.encode(JSON.stringify({ page: n, text: "", words: [] }));
    total += json[n - 1]!.length;
    model.offsets.push(total);
    model.html.push(escapeText(text[n - 1]!));
    model.folded.push(foldForSearch(text[n - 1]!.replace(/\s+/g, " ")));
  }
  model.json = new Uint8Array(total);
  json.forEach((part, i) => model.json.set(part!, model.offsets[i]!));
  return model;
}

/** Bytes a model holds in memory, roughly (strings at one byte a character, as V8 keeps Latin-1). */
export function textModelBytes(m: TextModel): number {
  let chars = 0;
  for (let i = 0; i < m.text.length; i++) chars += m.text[i]!.length + m.html[i]!.length + m.folded[i]!.length;
  return chars + m.json.length + m.offsets.length * 8;
}
