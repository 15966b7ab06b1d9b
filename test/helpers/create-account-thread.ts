/**
 * A worker thread with a store of its own (its own connection, as another process has): it opens
 * the store, waits at the shared start line with its siblings, then creates the account it is told
 * and posts the outcome (the id, null for "taken", or the error's code and message).
 * test/store/accounts-concurrent.test.ts starts several at once on one database.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openStore } from "../../src/store/open-store.ts";

const { url, username, apiKey, start, threads } = workerData as { url: string; username: string; apiKey: string; start: SharedArrayBuffer; threads: number };
const store = await openStore(url);
try {
  const line = new Int32Array(start);
  // Every thread's store is open before any creates: the creates race, not the opens.
  if (Atomics.add(line, 0, 1) + 1 === threads) Atomics.notify(line, 0);
  else while (Atomics.load(line, 0) < threads) Atomics.wait(line, 0, Atomics.load(line, 0), 1_000);
  try {
    const created = await store.accounts.createWithKey(username, apiKey, "s".repeat(32), Date.now());
    parentPort!.postMessage({ id: created.ok ? created.id : null });
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    parentPort!.postMessage({ error: `${String(e.code)}: ${String(e.message)}` });
  }
} finally {
  await store.close();
}
