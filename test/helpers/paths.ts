import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

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

/**
 * The arguments that make Node run one of the project's TypeScript files as a process of its own
 * (`path` relative to PROJECT_ROOT): through src/thread-boot.mjs, as the server starts its own
 * children, which runs the file's compiled twin when the test runner compiled the tests
 * (QUIRE_TEST_TWINS, scripts/run-tests.mjs), else the source through tsx. A crash test restarts
 * such a child many times; through tsx each start cost about 1.2 s more processor time.
 */
export function tsEntryArgs(path: string): string[] {
  return [join(PROJECT_ROOT, "src/thread-boot.mjs"), pathToFileURL(join(PROJECT_ROOT, path)).href];
}
