import { wordsOf, type Phrase } from "./search-query.ts";

/**
 * Words and pairs of neighbouring words as the search index matches them (decisions §11). A
 * phrase is found by its pairs: "storm front moved" holds `storm_front` and `front_moved`. A
 * document's pairs are made from each of its fields and pages apart, so a phrase never runs from
 * the title into a tag, or from one page into the next. Pairs are of words as written (folded,
 * never stemmed), so inside quotes a word matches only itself, as web search engines read a
 * quoted phrase.
 *
 * A word is folded as its engine folds the words it finds by (`Fold`): a phrase and its words must
 * agree, whatever the database. Words are split here, the same way for both.
 */

/** Lower case and accents, for a whole text: what an engine makes of letters before words are split. */
export type Fold = (text: string) => string;

/** Combining diacritical marks right after a Latin letter (the text decomposed). */
const LATIN_ACCENTS = /(?<=\p{Script=Latin})[\u0300-\u036f]+/gu;

/**
 * FTS5's `unicode61 remove_diacritics 2`: lower case, and the accents of Latin letters removed
 * (`Café` is `cafe`); other scripts keep theirs (`Й` is `й`, not `и`), as FTS5's own tables do.
 */
export const fts5Fold: Fold = (text) => {
  const lower = text.toLowerCase();
  // Case folding, not lower case, makes a final sigma a sigma.
  return ASCII.test(lower) ? lower : lower.normalize("NFD").replace(LATIN_ACCENTS, "").normalize("NFC").replaceAll("ς", "σ");
};

/** Text that is ASCII once folded (most text is): its words are plain runs of letters and digits. */
const ASCII = /^\p{ASCII}*$/u;
const ASCII_WORD = /[a-z0-9]+/g;

/** The folded words of a text, in order. */
export function foldedWords(text: string, fold: Fold = fts5Fold): string[] {
  const folded = fold(text);
  return ASCII.test(folded) ? (folded.match(ASCII_WORD) ?? []) : wordsOf(folded);
}

/** `_` is never part of a word (it is punctuation), so a pair reads back as its two words. */
const pair = (a: string, b: string) => `${a}_${b}`;

/**
 * The distinct words of the texts, and the distinct pairs of neighbouring words of each text,
 * never from one text into the next. Pairs are kept as each word's set of followers: the words
 * are strings already made, so a repeated pair costs two lookups, not a new string.
 */
export function indexTerms(texts: readonly string[], fold: Fold = fts5Fold): { words: string[]; pairs: string[] } {
  const followers = new Map<string, Set<string>>();
  for (const text of texts) {
    let before: Set<string> | undefined;
    for (const word of foldedWords(text, fold)) {
      let next = followers.get(word);
      if (next === undefined) followers.set(word, (next = new Set()));
      before?.add(word);
      before = next;
    }
  }
  const pairs: string[] = [];
  for (const [a, next] of followers) for (const b of next) pairs.push(pair(a, b));
  return { words: [...followers.keys()], pairs };
}

/** The distinct pairs of neighbouring words of each text, never from one text into the next. */
export function wordPairs(texts: readonly string[], fold: Fold = fts5Fold): string[] {
  return indexTerms(texts, fold).pairs;
}

/** A part of the query (its words as the user wrote them) as the index reads it: folded words, one or more. */
export function phraseWords(phrase: Phrase, fold: Fold = fts5Fold): string[] {
  return phrase.flatMap((w) => foldedWords(w, fold));
}

/** The pairs of a part of the query: every one is in a document that holds it. */
export function phrasePairs(phrase: Phrase, fold: Fold = fts5Fold): string[] {
  const words = phraseWords(phrase, fold);
  return words.slice(1).map((w, i) => pair(words[i]!, w));
}
