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
export function pageSnippet(marked: string, open: string, close: string): string {
  const words = marked.split(/\s+/).filter((w) => w !== "");
  const starts = words.flatMap((w, i) => (w.includes(open) ? [i] : []));
  let from = 0;
  let best = -1;
  for (const at of starts) {
    const start = Math.max(0, Math.min(at - LEAD_WORDS, words.length - SNIPPET_WORDS));
    const count = starts.filter((i) => i >= start && i < start + SNIPPET_WORDS).length;
    if (count > best) [from, best] = [start, count];
  }
  const to = Math.min(words.length, from + SNIPPET_WORDS);
  let text = words.slice(from, to).join(" ");
  // A match cut by the window's edge is closed (or opened) at the edge.
  const firstOpen = text.indexOf(open);
  const firstClose = text.indexOf(close);
  if (firstClose !== -1 && (firstOpen === -1 || firstClose < firstOpen)) text = open + text;
  if (text.lastIndexOf(open) > text.lastIndexOf(close)) text += close;
  text = text.replaceAll(open, "[[").replaceAll(close, "]]");
  return `${from > 0 ? "…" : ""}${text}${to < words.length ? "…" : ""}`;
}
