import { join } from "node:path";
import pino from "pino";
import type { Config } from "../../src/config.ts";
import type { FetchOptions } from "../../src/convert/fetch-url.ts";
import type { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import type { RunningWorker } from "../../src/jobs/worker.ts";
import { startWorkerRole, type WorkerTimings } from "../../src/worker-role.ts";
import type { TestServer } from "./test-server.ts";
import { sandboxSettings } from "../../src/convert/sandbox.ts";

export interface TestWorker {
  worker: RunningWorker;
  office: OfficeConverter;
  stop(): Promise<void>;
}

export interface TestWorkerOptions {
  officeTimeoutMs?: number;
  allowPrivate?: boolean;
  /** Overrides of the fetch options (small timeouts, a small maxBytes, the test-only isAllowedAddress). */
  fetch?: Partial<Omit<FetchOptions, "signal" | "allowPrivate">>;
  maxAttempts?: number;
  /** One conversion attempt, all steps together (120 s; `quire worker` allows 900 s). */
  jobTimeoutMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Slots of the worker (default 2) and the per-account cap of running jobs (default: as many as slots). */
  concurrency?: number;
  maxRunningPerAccount?: number;
  /** Slots only for accounts with nothing running (default 0 here; `quire worker` has 1). */
  newcomerSlots?: number;
  /** false: LibreOffice is not started (PDF-only tests; an office document then fails as the converter is not running). */
  startOffice?: boolean;
}

/** The timings of the tests' workers: quick polls and retries, shorter fetch and PDF limits. */
export const TEST_TIMINGS: WorkerTimings = {
  pollMs: 50,
  heartbeatMs: 5_000,
  retryBaseMs: 100,
  retryMaxMs: 500,
  stopGraceMs: 5_000,
  pdfStepTimeoutMs: 60_000,
  diskFullRetryMs: 200,
  fetch: { connectTimeoutMs: 5_000, idleTimeoutMs: 10_000, totalTimeoutMs: 30_000 },
};

/**
 * The worker role of `quire worker` (src/worker-role.ts: same handlers, same job loop, same
 * metrics hook), in this process, against a test server's store and blobs; without the periodic
 * sweeps, the sandbox set-up of the process, or an ops port.
 */
export async function startTestWorker(server: TestServer, opts: TestWorkerOptions = {}): Promise<TestWorker> {
  const concurrency = opts.concurrency ?? 2;
  const config: Readonly<Config> = {
    ...server.config,
    officeSlots: 2,
    officeTimeoutMs: opts.officeTimeoutMs ?? 20_000,
    workerConcurrency: concurrency,
    jobsPerAccount: opts.maxRunningPerAccount ?? concurrency,
    newcomerSlots: opts.newcomerSlots ?? 0,
    jobLeaseMs: 30_000,
    jobTimeoutMs: opts.jobTimeoutMs ?? 120_000,
    maxAttempts: opts.maxAttempts ?? 2,
    fetchAllowPrivate: opts.allowPrivate ?? true,
    metricsPort: undefined,
  };
  const timings = { ...TEST_TIMINGS, retryBaseMs: opts.retryBaseMs ?? 100, retryMaxMs: opts.retryMaxMs ?? 500 };
  const role = await startWorkerRole({
    config,
    services: server.services,
    log: pino({ level: "silent" }),
    officeDir: join(config.tmpDir, "office"),
    // What `quire worker` makes from the same configuration (QUIRE_BWRAP, QUIRE_UNSAFE_NO_SANDBOX).
    sandbox: sandboxSettings(config, "office"),
    timings,
    // No floor on a fetch's speed unless a test asks for one.
    fetch: { minBytesPerSecond: 0, ...opts.fetch },
    startOffice: opts.startOffice,
    sweeps: false,
  });
  const { worker, office } = role!;
  return {
    worker,
    office,
    async stop() {
      await worker.stop();
      await office.close();
    },
  };
}
