/**
 * `npm run bench -- detect`: the cost of format detection at upload time (decisions §5: a look at
 * the first bytes and a container's directory, no converter). For every fixture, detectFile() is
 * timed against the baseline of opening the file and reading its first 64 KiB, alternately, in
 * the same run; the ratio says what classification adds to the one read any check must do.
 */
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { detectFile } from "../src/detect/detect-format.ts";
import { FIXTURES } from "./bench-common.ts";

const ROUNDS = 20;

async function readHead(path: string): Promise<void> {
  const file = await open(path, "r");
  try {
    await file.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
  } finally {
    await file.close();
  }
}

async function timeAll(paths: string[], fn: (path: string) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (const path of paths) await fn(path);
  return performance.now() - started;
}

export async function benchDetect(): Promise<void> {
  const top = (await readdir(FIXTURES, { withFileTypes: true })).filter((d) => d.isFile() && d.name !== "MANIFEST.md").map((d) => join(FIXTURES, d.name));
  const bad = (await readdir(join(FIXTURES, "bad"))).map((n) => join(FIXTURES, "bad", n));
  const paths = [...top, ...bad];
  await timeAll(paths, (p) => detectFile(p)); // warm the page cache and the JIT
  let base = 0;
  let detect = 0;
  for (let round = 0; round < ROUNDS; round++) {
    base += await timeAll(paths, readHead);
    detect += await timeAll(paths, (p) => detectFile(p));
  }
  const per = (ms: number) => (ms / ROUNDS / paths.length).toFixed(3);
  process.stdout.write(
    `detect: ${paths.length} fixtures x ${ROUNDS} rounds\n` +
      `  baseline (open + read 64 KiB): ${per(base)} ms per file\n` +
      `  detectFile:                    ${per(detect)} ms per file (${(detect / base).toFixed(1)}x the baseline)\n`,
  );
  // The slowest kind shows where the time goes (zip packages: yauzl reads the central directory).
  const slowest: Array<[string, number]> = [];
  for (const path of paths) slowest.push([path.slice(FIXTURES.length), await timeAll(Array(5).fill(path), (p) => detectFile(p)) / 5]);
  slowest.sort((a, b) => b[1] - a[1]);
  for (const [name, ms] of slowest.slice(0, 5)) process.stdout.write(`  slowest: ${name} ${ms.toFixed(2)} ms\n`);
}
