import assert from "node:assert/strict";
import { test } from "node:test";
import { checkCommentInput, parseCommentId, parseCommentState, parseStars, plainText, ratingSummary } from "../../src/domain/comments.ts";
import type { QuireError } from "../../src/domain/errors.ts";

/** The rules of decisions §16 that every surface shares (reader forms, app, v1 operations). */

test("rating: the mean to one decimal, 0 when none; the distribution as n1,n2,n3,n4,n5", () => {
  assert.deepEqual(ratingSummary([0, 0, 0, 0, 0]), { rating: 0, ratingDist: "0,0,0,0,0", total: 0 });
  assert.deepEqual(ratingSummary([1, 1, 0, 0, 1]), { rating: 2.7, ratingDist: "1,1,0,0,1", total: 3 });
  assert.equal(ratingSummary([0, 0, 0, 1, 1]).rating, 4.5);
  assert.equal(ratingSummary([0, 0, 2, 0, 1]).rating, 3.7);
  assert.equal(ratingSummary([0, 0, 0, 0, 7]).rating, 5);
});

test("stars: a whole number 1 to 5, nothing else", () => {
  for (const ok of ["1", "5", " 3 "]) assert.notEqual(parseStars(ok), undefined, ok);
  for (const bad of [undefined, "", "0", "6", "2.5", "1e0", "four", "<b>", "11"]) assert.equal(parseStars(bad), undefined, String(bad));
});

test("comment input: plain text, trimmed, controls and bidi overrides dropped, limits in characters", () => {
  assert.deepEqual(checkCommentInput("  Ann \n Lee ", " line one\r\nline two \u0007\u202e"), { ok: true, author: "Ann Lee", body: "line one\nline two" });
  assert.deepEqual(checkCommentInput("", "x"), { ok: false, problem: "author-missing" });
  assert.deepEqual(checkCommentInput("\u202e\u0000", "x"), { ok: false, problem: "author-missing" });
  assert.deepEqual(checkCommentInput("a".repeat(81), "x"), { ok: false, problem: "author-too-long" });
  assert.deepEqual(checkCommentInput("a", " \n "), { ok: false, problem: "text-missing" });
  assert.equal(checkCommentInput("a", "😀".repeat(2000)).ok, true, "2,000 characters, not UTF-16 units");
  assert.deepEqual(checkCommentInput("a", "x".repeat(2001)), { ok: false, problem: "text-too-long" });
  // markup is kept as the reader typed it: it is text, and every surface writes it as text
  assert.deepEqual(checkCommentInput("<b>x</b>", "<script>1</script>"), { ok: true, author: "<b>x</b>", body: "<script>1</script>" });
  // what XML cannot carry is replaced, never answered
  const odd = checkCommentInput("a", "lone \uD800 and \uFFFF end");
  assert.deepEqual(odd, { ok: true, author: "a", body: "lone \uFFFD and \uFFFD end" });
  assert.equal(plainText("\t tab kept\tinside "), "tab kept\tinside");
});

test("commentId and state of the v1 operations: absent 200, malformed 201", () => {
  const code = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      return [(err as QuireError).code, (err as QuireError).field];
    }
    return undefined;
  };
  assert.deepEqual(code(() => parseCommentId(undefined)), ["200", "commentId"]);
  assert.deepEqual(code(() => parseCommentId("42")), ["201", "commentId"]);
  assert.equal(parseCommentId("0F0C5D9E-7C1A-4A8E-9A53-2B1C3F0D9E11"), "0f0c5d9e-7c1a-4a8e-9a53-2b1c3f0d9e11");
  assert.deepEqual(code(() => parseCommentState(undefined)), ["200", "state"]);
  assert.deepEqual(code(() => parseCommentState("Approved")), ["201", "state"]);
  assert.equal(parseCommentState("hidden"), "hidden");
});
