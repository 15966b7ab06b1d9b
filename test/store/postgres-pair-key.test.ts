import assert from "node:assert/strict";
import { test } from "node:test";
import { pairKey } from "../../src/store/dialects/postgres-search.ts";

test("a pair's key is the same number every time, a safe integer, and differs between pairs", () => {
  assert.equal(pairKey("storm_front"), pairKey("storm_front"));
  const keys = new Set<number>();
  for (let i = 0; i < 20_000; i++) {
    const key = pairKey(`w${i}_w${i + 1}`);
    assert.ok(Number.isSafeInteger(key) && key >= 0, String(key));
    keys.add(key);
  }
  assert.equal(keys.size, 20_000);
  assert.notEqual(pairKey("storm_front"), pairKey("front_storm"));
  assert.notEqual(pairKey("日本_語"), pairKey("語_日本"));
});
