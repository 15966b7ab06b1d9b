import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import { addressKey, newDailySalt, readerKey, SaltKeys, utcDay } from "../../src/domain/reader-identity.ts";

const UA = "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0";

test("utcDay is the UTC calendar day of an instant", () => {
  assert.equal(utcDay(Date.UTC(2026, 10, 27, 0, 0, 0)), "2026-11-27");
  assert.equal(utcDay(Date.UTC(2026, 10, 27, 23, 59, 59, 999)), "2026-11-27");
  assert.equal(utcDay(Date.UTC(2026, 10, 28)), "2026-11-28");
});

test("a reader key is stable for the same inputs and salt, and differs when any of them differs", () => {
  const salt = newDailySalt();
  const key = readerKey(salt, "203.0.113.9", UA, "doc1");
  assert.match(key, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(readerKey(salt, "203.0.113.9", UA, "doc1"), key);
  assert.notEqual(readerKey(salt, "203.0.113.10", UA, "doc1"), key);
  assert.notEqual(readerKey(salt, "203.0.113.9", `${UA} x`, "doc1"), key);
  assert.notEqual(readerKey(salt, "203.0.113.9", UA, "doc2"), key);
  assert.notEqual(readerKey(newDailySalt(), "203.0.113.9", UA, "doc1"), key, "another day's salt, another key");
});

test("a key is the base64url of the HMAC-SHA256's first 128 bits, as before its encoding was made cheaper (a day's keys outlive an upgrade)", () => {
  for (let i = 0; i < 2000; i++) {
    const salt = newDailySalt();
    const ua = `${UA} ${i}`;
    const expected = createHmac("sha256", salt).update(`203.0.113.${i % 256}\0${ua}\0doc${i}`).digest().subarray(0, 16).toString("base64url");
    assert.equal(readerKey(salt, `203.0.113.${i % 256}`, ua, `doc${i}`), expected);
  }
});

test("the key holds neither the address nor the user agent, and inputs cannot run together", () => {
  const salt = newDailySalt();
  const key = readerKey(salt, "203.0.113.9", UA, "doc1");
  assert.ok(!key.includes("203") && !key.includes("Mozilla"));
  assert.notEqual(readerKey(salt, "a", "bc", "d"), readerKey(salt, "ab", "c", "d"));
});

test("a day's keys remembered (SaltKeys) are the keys themselves, under that salt only, however many are asked for", () => {
  const salt = newDailySalt();
  const keys = new SaltKeys(salt, 50);
  const other = new SaltKeys(newDailySalt(), 50);
  for (let round = 0; round < 3; round++) {
    // 120 readers through a memory of 50: remembered, forgotten and made again, always the same keys.
    for (let i = 0; i < 120; i++) {
      const ua = `${UA} ${i}`;
      assert.equal(keys.readerKey("203.0.113.9", ua, "doc1"), readerKey(salt, "203.0.113.9", ua, "doc1"));
      assert.notEqual(other.readerKey("203.0.113.9", ua, "doc1"), keys.readerKey("203.0.113.9", ua, "doc1"));
    }
    assert.equal(keys.addressKey("203.0.113.9", "doc1"), addressKey(salt, "203.0.113.9", "doc1"));
    assert.equal(keys.readerKey("::ffff:203.0.113.9", UA, "d"), readerKey(salt, "203.0.113.9", UA, "d"));
  }
});

test("one client written two ways is one reader", () => {
  const salt = newDailySalt();
  assert.equal(readerKey(salt, "::ffff:203.0.113.9", UA, "d"), readerKey(salt, "203.0.113.9", UA, "d"));
  assert.equal(readerKey(salt, "2001:DB8::1", UA, "d"), readerKey(salt, "2001:db8::1", UA, "d"));
});

test("salts are random and long", () => {
  const a = newDailySalt();
  assert.notEqual(a, newDailySalt());
  assert.equal(Buffer.from(a, "base64url").length, 32);
});
