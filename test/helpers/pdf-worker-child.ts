import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { openServices } from "../../src/services.ts";
import { startWorkerRole } from "../../src/worker-role.ts";
import { TEST_TIMINGS } from "./test-worker.ts";
import { sandboxSettings } from "../../src/convert/sandbox.ts";

/**
 * The worker role of `quire worker` (src/worker-role.ts: same handler, same job loop, same store
 * and blobs), for tests that SIGKILL workers many times over PDFs only: LibreOffice is not
 * started, since starting it twenty times would take most of the test. worker-crash.test.ts kills
 * `quire worker` itself in the middle of a LibreOffice conversion. Prints "ready" once it takes jobs.
 */
const config = loadConfig();
const services = await openServices(config);
await startWorkerRole({
  // Private addresses as QUIRE_FETCH_ALLOW_PRIVATE says (off unless a test sets it), for URL uploads and webhooks alike.
  config: { ...config, officeSlots: 1, metricsPort: undefined },
  services,
  log: pino({ level: "silent" }),
  officeDir: join(config.tmpDir, "office"),
  sandbox: sandboxSettings(config, "office"),
  timings: { ...TEST_TIMINGS, heartbeatMs: undefined, stopGraceMs: 1000 },
  fetch: { minBytesPerSecond: 0 },
  startOffice: false,
  sweeps: false,
});
process.stdout.write("ready\n");
