import assert from "node:assert/strict";
import { test } from "node:test";
import { computeSignature, signatureMatches } from "../../src/domain/signature.ts";
import { independentSignature, SIGNING_VECTOR } from "../helpers/independent-sign.ts";

const VECTOR = SIGNING_VECTOR;

test("the decisions §3 test vector verifies with the server's function", () => {
  assert.equal(computeSignature(VECTOR.secret, Object.entries(VECTOR.params)), VECTOR.signature);
  assert.equal(independentSignature(VECTOR.secret, VECTOR.params), VECTOR.signature);
});

test("signature and file are left out; names sort by bytes; values are decoded UTF-8", () => {
  const params = { b: "2", a: "Größe", signature: "zzz", file: "x", Z: "" };
  const expected = independentSignature("s", params);
  assert.equal(computeSignature("s", Object.entries(params)), expected);
  // byte order puts "Z" (0x5A) before "a" (0x61)
  assert.equal(expected, independentSignature("s", { Z: "", a: "Größe", b: "2" }));
});

test("names beyond U+FFFF sort by their UTF-8 bytes, not by UTF-16 code units", () => {
  // UTF-16 puts U+1F600 (a surrogate pair, D83D…) before U+FF5E; their UTF-8 bytes (F0… > EF…) do not.
  const params = { "\u{1F600}": "1", "\uFF5E": "2", a: "3", "\u00E9": "4" };
  const expected = independentSignature("s", params);
  assert.equal(computeSignature("s", Object.entries(params)), expected);
  assert.equal(computeSignature("s", Object.entries(params).reverse()), expected);
  assert.notEqual(expected, independentSignature("s", { "\u{1F600}": "1", a: "3" }));
});

test("comparison is case-insensitive and length-safe", () => {
  assert.equal(signatureMatches(VECTOR.signature, VECTOR.signature.toUpperCase()), true);
  assert.equal(signatureMatches(VECTOR.signature, VECTOR.signature.slice(1)), false);
  assert.equal(signatureMatches(VECTOR.signature, "0".repeat(32)), false);
});

test("the comparison is crypto.timingSafeEqual on 32 bytes, as SECURITY.md says", async () => {
  const crypto = (await import("node:crypto")).default;
  const { syncBuiltinESMExports } = await import("node:module");
  const original = crypto.timingSafeEqual;
  const seen: number[] = [];
  crypto.timingSafeEqual = (a, b) => {
    seen.push(a.byteLength, b.byteLength);
    return original(a, b);
  };
  syncBuiltinESMExports();
  try {
    const mixed = [...VECTOR.signature].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join("");
    assert.equal(signatureMatches(VECTOR.signature, mixed), true);
    assert.equal(signatureMatches(VECTOR.signature, "0".repeat(32)), false);
    assert.deepEqual(seen, [32, 32, 32, 32], "both comparisons went through timingSafeEqual");
    // not 32 hex digits: false at once (only the caller's own value is looked at)
    for (const given of ["g".repeat(32), "\u0130".repeat(32), `${VECTOR.signature} `, VECTOR.signature.slice(1)]) {
      assert.equal(signatureMatches(VECTOR.signature, given), false, JSON.stringify(given));
    }
    assert.equal(seen.length, 4);
  } finally {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
  }
});

test("a known limit of the historic signature: parameters re-split across names sign alike (SECURITY.md says so)", () => {
  // Names and values are concatenated with nothing between them, so a captured request can be
  // replayed with its parameters cut differently. TLS (and v2's bearer tokens) is what protects it.
  const sent = computeSignature("s", [["apiKey", "k"], ["title", "Q3"], ["type", "009000"]]);
  const replayed = computeSignature("s", [["apiKey", "k"], ["title", "Q3type009000"]]);
  assert.equal(replayed, sent);
});
