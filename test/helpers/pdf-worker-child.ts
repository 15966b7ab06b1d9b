import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { CONVERT_DOCUMENT } from "../../src/jobs/convert-document.ts";
import { startWorker } from "../../src/jobs/worker.ts";
import { openServices } from "../../src/services.ts";
import { testConvertHandler } from "./test-worker.ts";

/**
 * The conversion worker of `quire worker` (same handler, same job loop, same store and blobs),
 * for tests that SIGKILL workers many times over PDFs only: LibreOffice is not started, since
 * starting it twenty times would take most of the test. worker-crash.test.ts kills `quire worker`
 * itself in the middle of a LibreOffice conversion. Prints "ready" once it takes jobs.
 */
const config = loadConfig();
const log = pino({ level: "silent" });
const services = await openServices(config);
await mkdir(config.tmpDir, { recursive: true });
const office = new OfficeConverter({ slots: 1, timeoutMs: config.officeTimeoutMs, workDir: join(config.tmpDir, "office") });
const handler = testConvertHandler({ config, services, office, log, allowPrivate: false });
startWorker({
  jobs: services.store.jobs,
  registry: new Map([[CONVERT_DOCUMENT, handler]]),
  log,
  concurrency: config.workerConcurrency,
  maxRunningPerAccount: config.jobsPerAccount,
  newcomerSlots: config.newcomerSlots,
  leaseMs: config.jobLeaseMs,
  heartbeatMs: Math.max(500, Math.floor(config.jobLeaseMs / 4)),
  pollMs: 50,
  jobTimeoutMs: config.jobTimeoutMs,
  maxAttempts: config.maxAttempts,
  retryBaseMs: 100,
  retryMaxMs: 500,
  stopGraceMs: 1000,
});
process.stdout.write("ready\n");
