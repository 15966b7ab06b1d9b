#!/usr/bin/env -S node --min-semi-space-size=16
// Runs the compiled `dist/` (npm run build, done by `npm ci`). From a checkout whose sources are
// newer than dist/ (a developer editing src/), it runs the sources through tsx instead, so
// `quire` never runs stale code.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compiledEntry } from "./compiled.js";

if (compiledEntry(join(dirname(fileURLToPath(import.meta.url)), "..")).fresh) {
  await import("../dist/cli/main.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
