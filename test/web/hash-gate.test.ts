import assert from "node:assert/strict";
import { test } from "node:test";
import { BUSY, HashGate } from "../../src/web/app/hash-gate.ts";

/** A task that ends when the test says so, recording when it started. */
function task(name: string, started: string[]) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { run: async () => (started.push(name), await done, name), finish: () => finish() };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test("the hash gate: two at once, known clients first, unknown ones refused past their queue", async () => {
  const gate = new HashGate(2, 3);
  const started: string[] = [];
  const a = task("a", started);
  const b = task("b", started);
  const pa = gate.run(false, a.run);
  const pb = gate.run(false, b.run);
  const waiting = ["u1", "u2", "u3"].map((n) => task(n, started));
  const pu = waiting.map((t) => gate.run(false, t.run));
  // The unknown queue is full: the next unknown attempt is refused at once, without running.
  assert.equal(await gate.run(false, async () => "never"), BUSY);
  // A known client is never refused, and goes before the unknown ones already waiting.
  const k = task("k", started);
  const pk = gate.run(true, k.run);
  await settle();
  assert.deepEqual(started, ["a", "b"]);
  a.finish();
  assert.equal(await pa, "a");
  await settle();
  assert.deepEqual(started, ["a", "b", "k"]);
  b.finish();
  await pb;
  await settle();
  assert.deepEqual(started, ["a", "b", "k", "u1"]);
  k.finish();
  assert.equal(await pk, "k");
  for (const t of waiting) t.finish();
  assert.deepEqual(await Promise.all(pu), ["u1", "u2", "u3"]);
  // Everything drained: a new unknown attempt runs at once.
  const again: string[] = [];
  const c = task("c", again);
  const pc = gate.run(false, c.run);
  await settle();
  assert.deepEqual(again, ["c"]);
  c.finish();
  await pc;
});
