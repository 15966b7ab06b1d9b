// Starts a worker thread's or a forked process's TypeScript entry (a thread's in its workerData, a
// process's as its first argument): compiled (dist/) it is plain JavaScript; run from the sources
// it needs tsx, which a worker or a child does not always inherit from its parent (`quire`
// registers it in-process), so it is registered here when Node cannot load the file by itself.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { workerData } from "node:worker_threads";

const entry = twinOf(workerData?.entry ?? process.argv[2]);
try {
  await import(entry);
} catch (err) {
  if (err?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  const { register } = await import("tsx/esm/api");
  register();
  // A new address: the failed import stays in the module map under the old one.
  await import(`${entry}?tsx`);
}

/**
 * The test runner's compiled twin of a .ts entry (scripts/compile-tests.mjs), when the runner
 * names the folder of twins (QUIRE_TEST_TWINS): its modules keep their sources' addresses, so the
 * entries they name are .ts files, and through tsx each such start (a statistics writer, a search
 * thread) cost about 1.2 s more processor time than the twin. Any other entry is left as it is.
 */
function twinOf(url) {
  const twins = process.env.QUIRE_TEST_TWINS;
  if (!twins || !url.startsWith("file:") || !url.endsWith(".ts")) return url;
  const root = fileURLToPath(new URL("../", import.meta.url));
  const file = fileURLToPath(url);
  if (!file.startsWith(root)) return url;
  const twin = `${twins}/${file.slice(root.length).replace(/\.ts$/, ".js")}`;
  return existsSync(twin) ? pathToFileURL(twin).href : url;
}
