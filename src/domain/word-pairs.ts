import { wordsOf, type Phrase } from "./search-query.ts";

/**
 * Words and pairs of neighbouring words as the search index matches them (decisions §11), the
 * same on both databases. A word is folded: lower case, and without the accents of Latin, Greek
 * and Cyrillic letters (the combining diacritical marks, once the letter is decomposed); other
 * marks are parts of their letters (an Indic vowel sign) and stay.
 *
 * A phrase is found by its pairs: "storm front moved" holds `storm_front` and `front_moved`. A
 * document's pairs are made from each of its fields and pages apart, so a phrase never runs from
 * the title into a tag, or from one page into the next. Pairs are of words as written (folded,
 * never stemmed), so inside quotes a word matches only itself, as web search engines read a
 * quoted phrase.
 */

/** The blocks of combining diacritical marks. */
// eslint-disable-next-line no-misleading-character-class -- ranges of combining marks, on purpose: each is removed alone
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;

/** A text (a word, a page) folded as the index reads it. */
export function fold(text: string): string {
  return text.toLowerCase().normalize("NFD").replace(DIACRITICS, "");
}

/** Text that is ASCII once folded (most text is): its words are plain runs of letters and digits. */
const ASCII = /^\p{ASCII}*$/u;
const ASCII_WORD = /[a-z0-9]+/g;

/** The folded words of a text, in order. */
export function foldedWords(text: string): string[] {
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
export function indexTerms(texts: readonly string[]): { words: string[]; pairs: string[] } {
  const followers = new Map<string, Set<string>>();
  for (const text of texts) {
    let before: Set<string> | undefined;
    for (const word of foldedWords(text)) {
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
export function wordPairs(texts: readonly string[]): string[] {
  return indexTerms(texts).pairs;
}

/** A part of the query (its words as the user wrote them) as the index reads it: folded words, one or more. */
export function phraseWords(phrase: Phrase): string[] {
  return phrase.flatMap(foldedWords);
}

/** The pairs of a part of the query: every one is in a document that holds it. */
export function phrasePairs(phrase: Phrase): string[] {
  const words = phraseWords(phrase);
  return words.slice(1).map((w, i) => pair(words[i]!, w));
}
