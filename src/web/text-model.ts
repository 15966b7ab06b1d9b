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

/** The stored pages by number; anything not of the expected shape is left out. */
function storedPages(raw: Uint8Array, pageCount: number): Map<number, { text: string; words: unknown[] }> {
  let stored: unknown;
  try {
    stored = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    stored = [];
  }
  const byPage = new Map<number, { text: string; words: unknown[] }>();
  for (const p of Array.isArray(stored) ? stored : []) {
    const o = p as { page?: unknown; text?: unknown; words?: unknown } | null;
    if (typeof o !== "object" || o === null || typeof o.page !== "number" || !Number.isInteger(o.page)) continue;
    if (o.page < 1 || o.page > pageCount || byPage.has(o.page)) continue;
    byPage.set(o.page, { text: typeof o.text === "string" ? o.text : "", words: Array.isArray(o.words) ? o.words : [] });
  }
  return byPage;
}

/**
 * The model of a stored text.json (an array of `{page, text, words}`), for a document of
 * `pageCount` pages. Anything not of that shape (a blob written by an older version, damaged) counts
 * as no text for its page; pages beyond `pageCount` are ignored.
 */
export function buildTextModel(raw: Uint8Array, pageCount: number, bounds: TextBounds): TextModel {
  const byPage = storedPages(raw, pageCount);
  const model: TextModel = { text: [], html: [], folded: [], json: new Uint8Array(0), offsets: [0], chars: 0 };
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let n = 1; n <= pageCount; n++) {
    const page = byPage.get(n);
    const budget = Math.max(0, Math.min(bounds.maxPageChars, bounds.maxDocumentChars - model.chars));
    const text = cut(page?.text ?? "", budget);
    const words: Word[] = [];
    let used = 0;
    for (const w of page?.words ?? []) {
      if (!isWord(w)) continue;
      used += w.text.length + 1;
      if (used > budget) break;
      words.push({ text: w.text, x: w.x, y: w.y, w: w.w, h: w.h });
    }
    model.chars += text.length;
    model.text.push(text);
    model.html.push(escapeText(text));
    model.folded.push(foldForSearch(text.replace(/\s+/g, " ")));
    const json = encoder.encode(JSON.stringify({ page: n, text, words }));
    parts.push(json);
    total += json.length;
    model.offsets.push(total);
  }
  model.json = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    model.json.set(p, at);
    at += p.length;
  }
  return model;
}

/** Bytes a model holds in memory, roughly (strings at one byte a character, as V8 keeps Latin-1). */
export function textModelBytes(m: TextModel): number {
  let chars = 0;
  for (let i = 0; i < m.text.length; i++) chars += m.text[i]!.length + m.html[i]!.length + m.folded[i]!.length;
  return chars + m.json.length + m.offsets.length * 8;
}
