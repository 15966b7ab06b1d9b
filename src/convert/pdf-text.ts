/**
 * Page text with word boxes, from `pdftotext -bbox-layout` (poppler's reading order: flows, blocks,
 * lines), and the document description drawn from it.
 */
import { resolve } from "node:path";
import { ConversionError } from "./conversion-error.ts";
import { inspectPdf, runPoppler, type PageSize, type PdfLimits } from "./pdf-inspect.ts";

/** A word's box as fractions 0..1 of the displayed page (after /Rotate), origin top left. */
export interface Word {
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PageText {
  page: number;
  /** Words joined by spaces, lines by "\n". */
  text: string;
  words: Word[];
  /**
   * Set by extractText when a text bound dropped words of this page: the page has a text layer even
   * if none of it was kept, so it is never sent to OCR. Never stored (recognizePages leaves it out).
   */
  clipped?: true;
}

/** Characters of text kept per page and per document; words past either bound are dropped. */
export interface TextBounds {
  maxPageChars: number;
  maxDocumentChars: number;
}

/** QUIRE_TEXT_MAX_PAGE_CHARS and QUIRE_TEXT_MAX_DOCUMENT_CHARS's defaults. */
export const DEFAULT_TEXT_BOUNDS: TextBounds = { maxPageChars: 20_000, maxDocumentChars: 1_000_000 };

/** Pages per pdftotext process: bounds what one `timeoutMs` must cover. */
export const TEXT_BATCH_PAGES = 100;
/** A single unfinished token longer than this is not text poppler would write: stop reading. */
const MAX_PENDING = 4 * 1024 * 1024;

// Outside XML 1.0's Char production (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF),
// plus C1 controls, which XML 1.1 restricts and no reader wants.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Removes the characters an XML document cannot carry. */
export function xmlSafe(s: string): string {
  return s.replace(NOT_XML, "");
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (all, e: string) => {
    switch (e) {
      case "amp": return "&";
      case "lt": return "<";
      case "gt": return ">";
      case "quot": return '"';
      case "apos": return "'";
    }
    const code = e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : all;
  });
}

const clamp01 = (v: number) => (v < 0 ? 0 : v > 1 ? 1 : v);
// Five decimals place a word within 1/100000 of the page: far finer than any screen, and half the JSON.
const frac = (v: number, of: number) => Math.round(clamp01(v / of) * 1e5) / 1e5;

const TOKEN = /<page\b[^>]*>|<\/page>|<\/line>|<word xMin="([-0-9.]+)" yMin="([-0-9.]+)" xMax="([-0-9.]+)" yMax="([-0-9.]+)">([^<]*)<\/word>/g;

/** Streaming reader of one pdftotext run covering pages `first`.. (in order). */
class BboxReader {
  private pending = "";
  private page: PageText | undefined;
  private line: string[] = [];
  private lines: string[] = [];
  private nextPage: number;
  private inBody = false;
  private pageChars = 0;

  constructor(
    first: number,
    private readonly sizes: PageSize[],
    private readonly out: PageText[],
    private readonly bounds: TextBounds,
    /** Characters the document may still keep, shared by the runs of one extraction. */
    private readonly documentLeft: { chars: number },
  ) {
    this.nextPage = first;
  }

  push(chunk: string): void {
    this.pending += chunk;
    if (!this.inBody) {
      // The <head> carries the document's metadata, whose text is the producer's to choose.
      const at = this.pending.indexOf("<doc>");
      if (at < 0) {
        if (this.pending.length > MAX_PENDING) throw new ConversionError("corrupt", "The text of the PDF could not be read.");
        return;
      }
      this.inBody = true;
      this.pending = this.pending.slice(at + 5);
    }
    TOKEN.lastIndex = 0;
    let consumed = 0;
    for (let m = TOKEN.exec(this.pending); m; m = TOKEN.exec(this.pending)) {
      this.token(m);
      consumed = TOKEN.lastIndex;
    }
    this.pending = this.pending.slice(consumed);
    if (this.pending.length > MAX_PENDING) throw new ConversionError("corrupt", "The text of the PDF could not be read.");
  }

  private token(m: RegExpExecArray): void {
    const tag = m[0];
    if (tag.startsWith("<page")) {
      this.page = { page: this.nextPage++, text: "", words: [] };
      this.pageChars = 0;
      this.lines = [];
      this.line = [];
    } else if (tag === "</line>") {
      if (this.line.length) this.lines.push(this.line.join(" "));
      this.line = [];
    } else if (tag === "</page>") {
      if (!this.page) return;
      if (this.line.length) this.lines.push(this.line.join(" "));
      this.page.text = this.lines.join("\n");
      this.out.push(this.page);
      this.page = undefined;
    } else if (this.page) {
      const text = xmlSafe(decodeEntities(m[5] ?? "")).replace(/\s+/g, " ").trim();
      const size = this.sizes[this.page.page - 1];
      if (!text || !size) return;
      // A page drawing the same string thousands of times is megabytes of "text" that nobody reads.
      const cost = text.length + 1;
      if (this.pageChars + cost > this.bounds.maxPageChars || cost > this.documentLeft.chars) {
        this.page.clipped = true;
        return;
      }
      this.pageChars += cost;
      this.documentLeft.chars -= cost;
      const [x0, y0, x1, y1] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
      if (![x0, y0, x1, y1].every(Number.isFinite)) return;
      // pdftotext gives coordinates in the displayed (rotated) page, so the rotated size scales them.
      const x = frac(x0, size.width);
      const y = frac(y0, size.height);
      const w = Math.max(0, Math.round((frac(x1, size.width) - x) * 1e5) / 1e5);
      const h = Math.max(0, Math.round((frac(y1, size.height) - y) * 1e5) / 1e5);
      this.page.words.push({ text, x, y, w, h });
      this.line.push(text);
    }
  }
}

/**
 * The words of every page in reading order, with their boxes. Pages without text get an empty entry,
 * so the result always has one entry per page. Scanned pages have no text: no OCR is done here.
 * `range` limits it to those pages (a split document's page-range job); the document bound then
 * applies to the range, and is applied again when the ranges are put together.
 */
export async function extractText(
  pdfPath: string,
  limits: PdfLimits,
  bounds: TextBounds = DEFAULT_TEXT_BOUNDS,
  range?: { first: number; last: number },
): Promise<PageText[]> {
  pdfPath = resolve(pdfPath); // never an argument poppler could take for an option
  const { pageCount, pages } = await inspectPdf(pdfPath, limits);
  const out: PageText[] = [];
  const documentLeft = { chars: bounds.maxDocumentChars };
  const end = Math.min(pageCount, range?.last ?? pageCount);
  for (let first = range?.first ?? 1; first <= end; first += TEXT_BATCH_PAGES) {
    const last = Math.min(end, first + TEXT_BATCH_PAGES - 1);
    const got: PageText[] = [];
    const reader = new BboxReader(first, pages, got, bounds, documentLeft);
    await runPoppler("pdftotext", (at) => ["-bbox-layout", "-cropbox", "-enc", "UTF-8", "-f", String(first), "-l", String(last), at(pdfPath), "-"], {
      input: pdfPath,
      timeoutMs: limits.timeoutMs,
      sandbox: limits.sandbox,
      onStdout: (chunk) => reader.push(chunk),
    });
    for (let p = first; p <= last; p++) out.push(got[p - first] ?? { page: p, text: "", words: [] });
  }
  return out;
}

const SENTENCE_END = /[.!?…。！？](?:["'”’»)\]]*)(?=\s|$)/gu;

/**
 * The document's description when its owner gave none (decisions §5): the first meaningful text, at
 * most `maxChars` characters, whitespace collapsed, no control or format characters, cut at the last
 * sentence end that keeps at least half of the room, else at the last word boundary.
 */
export function summarize(pages: PageText[], maxChars = 1000): string {
  if (maxChars <= 0) return "";
  const text = pages
    .map((p) => clean(p.text))
    // A page of page numbers, dots or dingbats says nothing: start at the first page with a word.
    .filter((t) => /\p{L}{2}|\p{N}\p{L}|\p{L}\p{N}|\p{Lo}/u.test(t))
    .join(" ")
    // Leading bullets, rules and ornaments are not text either.
    .replace(/^[^\p{L}\p{N}]+/u, "");
  if (text.length <= maxChars) return text;

  let cut = -1;
  for (const m of text.matchAll(SENTENCE_END)) {
    const end = (m.index ?? 0) + m[0].length;
    if (end > maxChars) break;
    cut = end;
  }
  if (cut >= maxChars / 2) return text.slice(0, cut);

  // Word boundary: the last space at or before maxChars (the character at maxChars being a space
  // means the first maxChars characters end with a whole word).
  const space = text.lastIndexOf(" ", maxChars);
  if (space > 0) return text.slice(0, space).replace(/[\s,;:–—-]+$/u, "");
  // One unbroken run (long URL, unspaced script): cut by characters, never inside a surrogate pair.
  const codeUnits = /[\uD800-\uDBFF]/.test(text[maxChars - 1] ?? "") ? maxChars - 1 : maxChars;
  return text.slice(0, codeUnits);
}

function clean(s: string): string {
  // Controls and zero-width spaces separate words: they become spaces. Other format characters
  // (soft hyphen, BOM, bidi marks) sit inside words and just go; ZWJ/ZWNJ stay, some scripts spell with them.
  return xmlSafe(s.replace(/[\p{Cc}\u200B]/gu, " "))
    .replace(/\p{Co}|(?![\u200C\u200D])\p{Cf}/gu, "")
    .replace(/\s+/gu, " ")
    .trim();
}
