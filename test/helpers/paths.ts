import { fileURLToPath } from "node:url";

/** The shared fixtures, used in place (never copied into the project). */
export const FIXTURES = fileURLToPath(new URL("../../../shared/fixtures/", import.meta.url));
export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * How tests run `quire` as its own process: bin/quire.js, the command users run. It runs the
 * compiled dist/ that `npm ci` builds, which starts in a third of the CPU that TypeScript through
 * tsx costs, and falls back to the sources through tsx whenever src/ is newer than dist/, so a
 * test never runs stale code. Relative to PROJECT_ROOT (spawn with it as cwd).
 */
export const QUIRE_BIN = "bin/quire.js";
