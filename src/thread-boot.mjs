// Starts a worker thread's or a forked process's TypeScript entry (a thread's in its workerData, a
// process's as its first argument): compiled (dist/) it is plain JavaScript; run from the sources
// it needs tsx, which a worker or a child does not always inherit from its parent (`quire`
// registers it in-process), so it is registered here when Node cannot load the file by itself.
import { workerData } from "node:worker_threads";

const entry = workerData?.entry ?? process.argv[2];
try {
  await import(entry);
} catch (err) {
  if (err?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  const { register } = await import("tsx/esm/api");
  register();
  // A new address: the failed import stays in the module map under the old one.
  await import(`${entry}?tsx`);
}
