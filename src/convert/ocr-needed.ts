/**
 * Whether a page's own text layer is worth publishing, or the page must be read by OCR: an empty or
 * negligible layer (a scan, a page number alone on a picture) and a garbage one (what some scanners
 * write: mostly tokens that are no words) are treated as no text. Pure: it looks at the extracted text only.
 */
import type { PageText } from "./pdf-text.ts";

/** Fewer letters and digits than this is a page number or a stray mark, not a text layer; a
 *  one-word page ("PIRACY", a part title in freeculture.pdf) is text. */
export const MIN_TEXT_CHARS = 4;
/** Below this share of word-like tokens the layer is garbage. */
export const MIN_WORDLIKE_SHARE = 0.5;
/** Above this share of replacement, private-use or control characters the layer is garbage. */
export const MAX_ODD_SHARE = 0.1;

// A word of letters (marks allowed inside, an apostrophe or hyphen joining parts), or a number;
// punctuation around it is ignored. Scripts written without spaces make one long token of a sentence.
const WORDLIKE = /^(?:\p{L}\p{M}*(?:\p{L}|\p{M}|['’\-.])*\p{L}\p{M}*|\p{N}+(?:[.,:/-]\p{N}+)*[%°]?|[\p{N}ー]*[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}][\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{N}ー、・]*)$/u;
const EDGE_PUNCTUATION = /^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu;
// U+FFFD, private use (unmapped glyphs), controls and unassigned code points.
const ODD = /[\uFFFD\p{Co}\p{Cc}\p{Cn}]/u;

export type TextLayerVerdict = "text" | "empty" | "negligible" | "garbage";

/** What a page's extracted text layer is; anything but "text" means the page is OCR'd. */
export function textLayerVerdict(page: Pick<PageText, "text">): TextLayerVerdict {
  const text = page.text.normalize("NFC");
  const meaningful = text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
  if (!text.trim()) return "empty";
  const chars = [...text.replace(/\s+/gu, "")];
  const odd = chars.filter((c) => ODD.test(c)).length;
  if (odd / chars.length > MAX_ODD_SHARE) return "garbage";
  if (meaningful < MIN_TEXT_CHARS) return "negligible";
  const tokens = text.split(/\s+/u).filter((t) => t !== "");
  let wordlike = 0;
  let weight = 0;
  for (const t of tokens) {
    const core = t.replace(EDGE_PUNCTUATION, "");
    // A sign alone says nothing either way: font tables, list bullets, formulas are full of them.
    if ([...t].length < 2) continue;
    // Long tokens weigh more: one long garbage run is not outvoted by a few short words.
    const w = Math.min(20, [...t].length);
    weight += w;
    if (WORDLIKE.test(core)) wordlike += w;
  }
  return weight > 0 && wordlike / weight >= MIN_WORDLIKE_SHARE ? "text" : "garbage";
}

/** True when the page should be OCR'd: its text layer is empty, negligible or garbage. */
export function needsOcr(page: Pick<PageText, "text">): boolean {
  return textLayerVerdict(page) !== "text";
}
