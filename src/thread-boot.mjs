// Starts a worker thread's TypeScript entry: compiled (dist/) it is plain JavaScript; run from the
// sources it needs tsx, which a worker does not always inherit from its parent (`quire` registers it
// in-process), so it is registered here when Node cannot load the file by itself.
import { workerData } from "node:worker_threads";

try {
  await import(workerData.entry);
} catch (err) {
  if (err?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  const { register } = await import("tsx/esm/api");
  register();
  // A new address: the failed import stays in the module map under the old one.
  await import(`${workerData.entry}?tsx`);
}
