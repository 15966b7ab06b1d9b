#!/usr/bin/env node
// Runs every test file under test/ with Node's own runner (tsx for TypeScript). Node 20 has no
// glob for --test, so the files are listed here; files run in parallel processes, two at a time.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const filter = process.argv.slice(2);
const files = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith(".test.ts") && (filter.length === 0 || filter.some((f) => p.includes(f)))) files.push(p);
  }
};
walk("test");
files.sort();
const concurrency = process.env.QUIRE_TEST_CONCURRENCY ?? "2";
const result = spawnSync(
  process.execPath,
  // A test that hangs fails after this long, naming itself, instead of stalling the whole run.
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, "--test-timeout=240000", "--test-reporter=spec", ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
