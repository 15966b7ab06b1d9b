import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { QuireError } from "../../src/domain/errors.ts";
import { addFormEncoded, addQueryString, RequestParams } from "../../src/api/params.ts";

/**
 * A query string is read as text when it is plain ASCII without escapes, and as bytes otherwise;
 * both readings must give the same parameters and the same first failure, whatever the input.
 */

type Reading = { entries: Array<[string, string]>; failure?: { code: string; field: string | undefined } };

function read(add: (params: RequestParams) => void): Reading {
  const params = new RequestParams();
  try {
    add(params);
    return { entries: [...params.entries()] };
  } catch (err) {
    assert.ok(err instanceof QuireError, String(err));
    return { entries: [...params.entries()], failure: { code: err.code, field: err.field } };
  }
}

/** Node hands the request line over as latin1: one character per byte, 0x00–0xff. */
const requestLineChars = fc.constantFrom("a", "b", "=", "&", "%", "+", "2", "0", "C", "3", "A", "9", "~", " ", "\u00c3", "\u00a9", "\u0080", "\u00ff");

test("text and byte readings of a query string agree", () => {
  fc.assert(
    fc.property(fc.array(requestLineChars, { maxLength: 24 }).map((cs) => cs.join("")), (query) => {
      assert.deepEqual(read((p) => addQueryString(p, query)), read((p) => addFormEncoded(p, Buffer.from(query, "latin1"))));
    }),
    { numRuns: 20_000, seed: 20261122 },
  );
});

test("a plain query reads as text, repeated names failing on the name", () => {
  assert.deepEqual(read((p) => addQueryString(p, "a=1&&b=&c&=x")), { entries: [["a", "1"], ["b", ""], ["c", ""], ["", "x"]] });
  assert.deepEqual(read((p) => addQueryString(p, "a=1&b=2&a=3&b=4")), {
    entries: [["a", "1"], ["b", "2"]],
    failure: { code: "201", field: "a" },
  });
});
