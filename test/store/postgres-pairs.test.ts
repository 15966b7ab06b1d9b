import assert from "node:assert/strict";
import { test } from "node:test";
import { vectorPairs } from "../../src/store/dialects/postgres-pairs.ts";

test("pairs are each lexeme with the next one present, and the distance between them", () => {
  // to_tsvector('english', 'The house of cards, the e-mail')
  const vector = "'card':4 'e':7 'e-mail':6 'hous':2 'mail':8";
  assert.deepEqual(vectorPairs([vector]).sort(), ["card 2 e-mail", "e 1 mail", "e-mail 1 e", "hous 2 card"]);
});

test("pairs never run from one vector into the next; repeated pairs are kept once; weights are read past", () => {
  assert.deepEqual(vectorPairs(["'a':1,3 'b':2,4", "'b':1A 'c':2A"]).sort(), ["a 1 b", "b 1 a", "b 1 c"]);
});

test("quotes and backslashes in lexemes are read as tsvector's output escapes them; stripped lexemes make no pair", () => {
  assert.deepEqual(vectorPairs(["'it''s':1 'a\\\\b':2 'stripped'"]), ["it's 1 a\\b"]);
  assert.deepEqual(vectorPairs([""]), []);
});
