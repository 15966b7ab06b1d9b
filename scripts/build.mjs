#!/usr/bin/env node
// Compiles src/ into dist/ once (tsc), so no process pays TypeScript's compiler at start, and copies
// the files the code reads next to itself (web assets, the UNO helper). Runs on `npm ci` (prepare).
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");
// `--out-dir DIR` builds elsewhere (the test of the build does, beside a dist/ other tests may be running).
const outAt = process.argv.indexOf("--out-dir");
const dist = outAt > 0 && process.argv[outAt + 1] ? resolve(process.argv[outAt + 1]) : join(root, "dist");

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const built = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", dist], { stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);

const copyNonTs = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) copyNonTs(p);
    else if (!e.name.endsWith(".ts")) cpSync(p, join(dist, relative(src, p)));
  }
};
copyNonTs(src);
