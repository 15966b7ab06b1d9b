import assert from "node:assert/strict";
import { test } from "node:test";
import { parseSearchQuery, wordsOf } from "../../src/domain/search-query.ts";
import { foldedWords, fts5Fold, indexTerms, phrasePairs, phraseWords } from "../../src/domain/word-pairs.ts";

/** Words and pairs of words as both search engines match them (decisions §11). */

test("folding as FTS5 does: case, and the accents of Latin letters; other scripts keep theirs", () => {
  assert.equal(fts5Fold("CAFÉ Crème NAÏVE Ångström Łódź"), "cafe creme naive angstrom łodz");
  assert.equal(fts5Fold("Ἀθῆναι"), "ἀθῆναι");
  assert.equal(fts5Fold("Йод"), "йод");
  assert.equal(fts5Fold("हिन्दी"), "हिन्दी", "a Devanagari vowel sign is part of its letter");
  assert.equal(fts5Fold("cafe\u0301"), "cafe", "a decomposed accent goes as a composed one does");
  assert.equal(fts5Fold("Straße"), "straße");
});

test("a text's words are its runs of letters, digits and marks, folded; punctuation and symbols separate them", () => {
  assert.deepEqual(foldedWords("The Lighthouse-keeper's log, 1907: café crème!"), ["the", "lighthouse", "keeper", "s", "log", "1907", "cafe", "creme"]);
  assert.deepEqual(foldedWords("日本語 テキスト and हिन्दी भाषा"), ["日本語", "テキスト", "and", "हिन्दी", "भाषा"]);
  assert.deepEqual(foldedWords("snake_case a\u0301 \u0301 b"), ["snake", "case", "a", "b"], "marks alone are no word");
  assert.deepEqual(foldedWords(""), []);
});

test("plain ASCII text and any other text are split alike", () => {
  for (const text of ["Hello, World 42 times", "naïve café, 3 × 4 = twelve", "x\ty\nz—ω", "ÀÉÎ-õü ŒUVRE Straße"]) {
    assert.deepEqual(foldedWords(text), wordsOf(fts5Fold(text)), text);
  }
});

test("each text's pairs of neighbouring words, never from one text into the next, each once", () => {
  const { words, pairs } = indexTerms(["Storm front", "front moved; storm front moved", ""]);
  assert.deepEqual(words.sort(), ["front", "moved", "storm"]);
  assert.deepEqual(pairs.sort(), ["front_moved", "moved_storm", "storm_front"], "no front_front from the first text into the second");
});

test("a phrase of the query gives the pairs its text gives in a document, however it is written", () => {
  const [phrase] = parseSearchQuery('"LIGHTHOUSE keeper\'s Café"').required;
  assert.deepEqual(phraseWords(phrase!), ["lighthouse", "keeper", "s", "cafe"]);
  assert.deepEqual(phrasePairs(phrase!), ["lighthouse_keeper", "keeper_s", "s_cafe"]);
  const { pairs } = indexTerms(["The lighthouse keeper's café was closed."]);
  for (const p of phrasePairs(phrase!)) assert.ok(pairs.includes(p), p);
  assert.deepEqual(phrasePairs(["word"]), []);
});
