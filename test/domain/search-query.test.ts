import assert from "node:assert/strict";
import { test } from "node:test";
import { hasPhrases, isSearchable, parseSearchQuery } from "../../src/domain/search-query.ts";

/** The query language of decisions §11, read once before any engine sees it. */

test("words, phrases and exclusions", () => {
  assert.deepEqual(parseSearchQuery('cats "big dogs" -mice -"small birds"'), {
    required: [["cats"], ["big", "dogs"]],
    excluded: [["mice"], ["small", "birds"]],
  });
  assert.ok(hasPhrases(parseSearchQuery('"a b"')));
  assert.ok(!hasPhrases(parseSearchQuery("a b")));
});

test("punctuation separates words; an unclosed quote runs to the end; operators are words", () => {
  assert.deepEqual(parseSearchQuery("e-mail l'été").required, [["e", "mail"], ["l", "été"]]);
  assert.deepEqual(parseSearchQuery('x "open phrase').required, [["x"], ["open", "phrase"]]);
  assert.deepEqual(parseSearchQuery("a OR b* NEAR(c)").required, [["a"], ["OR"], ["b"], ["NEAR", "c"]]);
});

test("nothing searchable: empty, punctuation, marks alone, exclusions alone", () => {
  for (const q of ["", "   ", '"', "-", "!!!", "\u0301", "-word", '-"two words"']) assert.ok(!isSearchable(parseSearchQuery(q)), JSON.stringify(q));
  assert.deepEqual(parseSearchQuery("\u0301\u0301 hello").required, [["hello"]]);
});

test("at most 64 parts are kept", () => {
  const q = parseSearchQuery(Array.from({ length: 200 }, (_, i) => `w${i}`).join(" "));
  assert.equal(q.required.length, 64);
});
