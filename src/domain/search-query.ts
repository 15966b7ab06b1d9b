/**
 * A search query as web search engines read it (decisions §11): words, "quoted phrases", and
 * `-excluded` words or phrases; every word and phrase not excluded must be found. Parsed once
 * here, then written in each engine's own syntax by the store, so no user text ever reaches an
 * engine's query parser unquoted.
 */

export const MAX_QUERY_CHARS = 500;

/**
 * A word is a phrase of one word. Words are as the user wrote them; the engines fold case and
 * accents. `text` is the part as typed (not enumerated), for an engine whose parser keeps more
 * than letters and digits in a word: PostgreSQL reads `3.14` or an e-mail address as one.
 */
export type Phrase = readonly string[] & { readonly text?: string };

export interface SearchQuery {
  /** Each must be found (in the title, tags, description or the text). */
  readonly required: readonly Phrase[];
  /** None may be found. */
  readonly excluded: readonly Phrase[];
}

/** Letters, digits and marks: what both engines' tokenizers keep as parts of words. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** Words with a letter or digit: marks alone are nothing an engine indexes (a required "word" of them would find nothing). */
export function wordsOf(text: string): string[] {
  return (text.match(WORD) ?? []).filter((w) => /[\p{L}\p{N}]/u.test(w));
}

/**
 * Splits a query into phrases. A `-` right before a word or an opening quote excludes it; an
 * unclosed quote runs to the end; punctuation separates words (so `e-mail` is the phrase
 * "e mail", as the engines index it). At most 64 phrases are kept: a query is not a document.
 */
export function parseSearchQuery(q: string): SearchQuery {
  const required: Phrase[] = [];
  const excluded: Phrase[] = [];
  const token = /(-?)"([^"]*)"?|(-?)([^\s"]+)/g;
  for (let m = token.exec(q); m !== null; m = token.exec(q)) {
    const quoted = m[2] !== undefined;
    const negated = (quoted ? m[1] : m[3]) === "-";
    const text = quoted ? m[2]! : m[4]!;
    const words = wordsOf(text);
    if (words.length === 0) continue;
    // Outside quotes, `e-mail` or `l'été` is still one thing the user typed: read as a phrase.
    (negated ? excluded : required).push(Object.defineProperty(words, "text", { value: text, enumerable: false }));
    if (required.length + excluded.length >= 64) break;
  }
  return { required, excluded };
}

/** Whether the query can match anything: exclusions alone find nothing (as web search engines answer). */
export function isSearchable(q: SearchQuery): boolean {
  return q.required.length > 0;
}

/** Whether any required or excluded part is a phrase of more than one word. */
export function hasPhrases(q: SearchQuery): boolean {
  return [...q.required, ...q.excluded].some((p) => p.length > 1);
}

/** Pages answered per document found (the best-ranked ones). */
export const HITS_PER_DOCUMENT = 5;
