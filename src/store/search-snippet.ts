import { fts5Fold, type Fold } from "../domain/word-pairs.ts";

/** Around each match in an engine's marked copy of a page (text extraction drops control characters; a stray one would only change a snippet). */
export const MARK_OPEN = "\u0001";
export const MARK_CLOSE = "\u0002";

const NON_SPACE = /\S+/g;

/** Words a snippet holds (FTS5's `snippet()` was asked for as many). */
const SNIPPET_WORDS = 16;
/** Words kept before the first match of the snippet, so it reads in context. */
const LEAD_WORDS = 3;

/**
 * A few words of a page around its best place, the matches between `[[` and `]]` (decisions §11),
 * from the page as highlighted with `open` and `close` around each match: the window of
 * SNIPPET_WORDS words holding the most matches (the first such), starting a few words before its
 * first match, `…` where the page goes on. Made here rather than by a second query of the engine.
 */
export function pageSnippet(marked: string, open: string, close: string, cut: { before: boolean; after: boolean } = { before: false, after: false }): string {
  const words = marked.match(NON_SPACE) ?? [];
  const starts: number[] = [];
  for (let i = 0; i < words.length; i++) if (words[i]!.includes(open)) starts.push(i);
  let from = 0;
  let best = -1;
  // The matches in each match's window, between two indexes that only move on (windows start in order).
  let lo = 0;
  let hi = 0;
  for (const at of starts) {
    const start = Math.max(0, Math.min(at - LEAD_WORDS, words.length - SNIPPET_WORDS));
    while (starts[lo]! < start) lo++;
    while (hi < starts.length && starts[hi]! < start + SNIPPET_WORDS) hi++;
    if (hi - lo > best) [from, best] = [start, hi - lo];
  }
  const to = Math.min(words.length, from + SNIPPET_WORDS);
  let text = words.slice(from, to).join(" ");
  // A match cut by the window's edge is closed (or opened) at the edge.
  const firstOpen = text.indexOf(open);
  const firstClose = text.indexOf(close);
  if (firstClose !== -1 && (firstOpen === -1 || firstClose < firstOpen)) text = open + text;
  if (text.lastIndexOf(open) > text.lastIndexOf(close)) text += close;
  text = text.replaceAll(open, "[[").replaceAll(close, "]]");
  return `${from > 0 || cut.before ? "…" : ""}${text}${to < words.length || cut.after ? "…" : ""}`;
}

/** Characters of a page kept before and after its first match for a highlighter (about 20 and 60 words). */
const WINDOW_BEFORE = 160;
const WINDOW_AFTER = 480;

/**
 * The part of a page around the first place where one of the query's words (folded by `fold`) is
 * written as it is, for an engine's highlighter to mark instead of the whole page (PostgreSQL's
 * `ts_headline` parses every word it is given: half a millisecond a page), cut at spaces, with
 * whether the page goes on before and after it. Undefined when no word is there as written (only
 * another form of it, found by stemming): the whole page must be marked then.
 */
export function matchWindow(page: string, words: readonly string[], fold: Fold = fts5Fold): { text: string; before: boolean; after: boolean } | undefined {
  const folded = fold(page);
  // Folding mostly keeps a page's length (é is e): its offsets are then the page's; else the whole page is marked.
  if (folded.length !== page.length || words.length === 0) return undefined;
  let first = -1;
  for (const word of words) {
    for (let at = folded.indexOf(word); at !== -1 && (first === -1 || at < first); at = folded.indexOf(word, at + 1)) {
      if (!isWordChar(folded[at - 1]) && !isWordChar(folded[at + word.length])) {
        first = at;
        break;
      }
    }
  }
  if (first === -1) return undefined;
  let start = Math.max(0, first - WINDOW_BEFORE);
  let end = Math.min(page.length, first + WINDOW_AFTER);
  // Cut at spaces, never into a word.
  while (start > 0 && start < first && !SPACE.test(page[start - 1]!)) start++;
  while (end < page.length && end > first && !SPACE.test(page[end]!)) end--;
  return { text: page.slice(start, end), before: start > 0, after: end < page.length };
}

const SPACE = /\s/;
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const isWordChar = (c: string | undefined) => c !== undefined && WORD_CHAR.test(c);
