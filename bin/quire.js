#!/usr/bin/env node
// Runs the compiled `dist/` (npm run build, done by `npm ci`). From a checkout whose sources are
// newer than dist/ (a developer editing src/), it runs the sources through tsx instead, so
// `quire` never runs stale code.
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const compiled = join(root, "dist", "cli", "main.js");

function newestMtime(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

const sources = join(root, "src");
const useCompiled = existsSync(compiled) && (!existsSync(sources) || newestMtime(sources) <= statSync(compiled).mtimeMs);
if (useCompiled) {
  await import("../dist/cli/main.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
