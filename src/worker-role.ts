import { mkdir } from "node:fs/promises";
import type { Logger } from "pino";
import type { Config } from "./config.ts";
import type { FetchOptions } from "./convert/fetch-url.ts";
import { configureStallWindow } from "./convert/cpu-watch.ts";
import { OfficeConverter } from "./convert/office-to-pdf.ts";
import { assertSandboxWorks, type SandboxSettings } from "./convert/sandbox.ts";
import { PAGE_WIDTHS } from "./domain/page-images.ts";
import { CONVERT_DOCUMENT, type JobKind } from "./domain/job-kinds.ts";
import { convertDocumentHandler, type ConvertDocumentDeps } from "./jobs/convert-document.ts";
import { convertPagesHandler } from "./jobs/convert-pages.ts";
import { indexTextHandler } from "./jobs/index-text.ts";
import { pageVariantsHandler } from "./jobs/page-variants.ts";
import { pageVariants } from "./page-variants.ts";
import type { JobHandler, JobRegistry } from "./jobs/job-registry.ts";
import { replaceFileHandler } from "./jobs/replace-file.ts";
import { publishScheduledHandler } from "./jobs/publish-scheduled.ts";
import { sweepOrphanBlobs } from "./jobs/orphan-sweep.ts";
import { sweep } from "./jobs/sweeper.ts";
import { sweepWebhookDeliveries, webhookDeliveryHandler, webhookDeliverySettings } from "./jobs/webhook-delivery.ts";
import { startWorker, type RunningWorker } from "./jobs/worker.ts";
import { officeCheck } from "./ops/converter-check.ts";
import { diskCheck } from "./ops/disk-check.ts";
import type { ReadinessCheck } from "./ops/health.ts";
import { jobMetricsHook } from "./ops/job-metrics.ts";
import { createMetrics, registerQueueGauges, type Metrics } from "./ops/metrics.ts";
import { startOpsServer } from "./ops/ops-server.ts";
import type { Services } from "./services.ts";

/**
 * The worker role, assembled once: `quire worker`, the tests and the benchmarks all start it here,
 * so the wiring they exercise is the one that ships, sandbox included (its settings are passed in,
 * made from the configuration by `sandboxSettings`). The process around it (signals, the office
 * folder it claims) is `src/cli/worker-command.ts`'s.
 */

/** How often and how long the worker waits. Tests shorten them; they never change what a job does. */
export interface WorkerTimings {
  pollMs: number;
  /** Lease renewals; by default a quarter of the lease (QUIRE_JOB_LEASE_SECONDS). */
  heartbeatMs?: number;
  retryBaseMs: number;
  retryMaxMs: number;
  stopGraceMs: number;
  /** Whole of one PDF inspection or rendering step. */
  pdfStepTimeoutMs: number;
  /** How often a job waiting for disk space tries again (QUIRE_DISK_FULL_WAIT_HOURS bounds the whole wait). */
  diskFullRetryMs?: number;
  /** Fetching a URL upload's original: per hop, idle, and (by default QUIRE_FETCH_TIMEOUT_SECONDS) in all. */
  fetch: { connectTimeoutMs: number; idleTimeoutMs: number; totalTimeoutMs?: number };
}

/** Finished webhook deliveries are listed (`svc.webhook.deliveries`) for this long, then forgotten. */
const WEBHOOK_HISTORY_MS = 30 * 86_400_000;

export const PRODUCTION_TIMINGS: Readonly<WorkerTimings> = {
  pollMs: 500,
  retryBaseMs: 5_000,
  retryMaxMs: 300_000,
  stopGraceMs: 30_000,
  pdfStepTimeoutMs: 120_000,
  diskFullRetryMs: 60_000,
  fetch: { connectTimeoutMs: 10_000, idleTimeoutMs: 30_000 },
};

export interface WorkerRoleOptions {
  config: Readonly<Config>;
  services: Pick<Services, "store" | "blobs" | "checkBlobs"> & Partial<Pick<Services, "diskSpace">>;
  log: Logger;
  /** LibreOffice's profiles and scratch (`quire worker` claims one under QUIRE_TMP_DIR). */
  officeDir: string;
  /**
   * Where every converter of this worker runs: `sandboxSettings(config, basename(officeDir))`, made
   * by `quire worker` and by the tests' workers alike; checked to work before anything starts.
   */
  sandbox: SandboxSettings;
  timings?: Readonly<WorkerTimings>;
  /** Replaces fetch settings the configuration gives (a test's address check, a small maxBytes). */
  fetch?: Partial<Omit<FetchOptions, "signal">>;
  /** false: LibreOffice is not started (PDF-only tests; an office document then fails). */
  startOffice?: boolean;
  /** The periodic sweeps (overdue documents, orphan blobs); off in tests that look at the store. */
  sweeps?: boolean;
  /** Hears of each thing started, as soon as it is, so a stop during the start still closes it. */
  onStarted?: (close: () => Promise<void>) => void;
  /** Asked between the steps of the start: true stops starting (a signal came). */
  stopping?: () => boolean;
}

export interface RunningWorkerRole {
  worker: RunningWorker;
  office: OfficeConverter;
  /** Where the worker answers health checks and metrics (QUIRE_METRICS_PORT), when configured. */
  opsPort?: number;
}

/**
 * The one place job kinds meet their handlers: one entry per kind of src/domain/job-kinds.ts, which
 * the compiler checks (a kind without a handler, or a handler for no kind, does not build).
 */
export function jobRegistry(opts: Pick<WorkerRoleOptions, "config" | "services" | "log" | "timings" | "fetch" | "sandbox"> & { office: OfficeConverter }): JobRegistry {
  const { config, services } = opts;
  const timings = opts.timings ?? PRODUCTION_TIMINGS;
  const convert: ConvertDocumentDeps = {
    store: services.store,
    blobs: services.blobs,
    office: opts.office,
    log: opts.log,
    tmpDir: config.tmpDir,
    diskSpace: services.diskSpace,
    fetch: {
      maxBytes: config.maxUploadBytes,
      allowPrivate: config.fetchAllowPrivate,
      connectTimeoutMs: timings.fetch.connectTimeoutMs,
      idleTimeoutMs: timings.fetch.idleTimeoutMs,
      totalTimeoutMs: timings.fetch.totalTimeoutMs ?? config.fetchTimeoutMs,
      minBytesPerSecond: config.fetchMinBytesPerSecond,
      ...opts.fetch,
    },
    pdfLimits: { maxPages: config.maxPages, maxPagePixels: 50_000_000, timeoutMs: timings.pdfStepTimeoutMs, sandbox: opts.sandbox },
    maxImagePixels: config.maxImagePixels,
    textBounds: { maxPageChars: config.textMaxPageChars, maxDocumentChars: config.textMaxDocumentChars },
    // Thumbnails are variants of the reading size, made on request (src/page-variants.ts).
    pageWidths: { read: PAGE_WIDTHS.read },
    ocr: { languages: config.ocrLanguages, concurrency: config.ocrConcurrency },
    renderProcesses: config.renderProcesses,
    fanout: { minPages: config.fanoutMinPages, rangePages: config.fanoutRangePages },
  };
  // One encoder at a time for both kinds of page-variants job: they are background work beside conversions.
  const variants = pageVariants(services.blobs, { concurrency: 1 });
  return {
    // A document's conversion, and the page ranges a long one is split into (any worker may take any range).
    "convert-document": convertDocumentHandler(convert),
    "convert-pages": convertPagesHandler(convert),
    "webhook-delivery": webhookDeliveryHandler({ store: services.store, log: opts.log, ...webhookDeliverySettings(config) }),
    "index-text": indexTextHandler({ store: services.store, blobs: services.blobs }),
    // A v2 draft published at its scheduledTime (decisions §14).
    "publish-scheduled": publishScheduledHandler({ store: services.store }),
    // A published document's new file, converted beside its pages (issue 26 item 5).
    "replace-file": replaceFileHandler(convert),
    // `quire pages reencode`: the reading variants of documents published before they existed.
    "page-variants": pageVariantsHandler({ store: services.store, variants }),
    // `quire pages reencode --force`: the same, every stored WebP variant made again by today's encoder.
    "page-variants-remake": pageVariantsHandler({ store: services.store, variants, remake: true }),
  } satisfies Record<JobKind, JobHandler>;
}

/** LibreOffice, the job loop with its metrics, the sweeps and the ops port, as the configuration says. */
export async function startWorkerRole(opts: WorkerRoleOptions): Promise<RunningWorkerRole | undefined> {
  const { config, services, log } = opts;
  const timings = opts.timings ?? PRODUCTION_TIMINGS;
  const started = opts.onStarted ?? (() => {});
  // Fails closed: no converter ever runs unconfined unless the configuration asks for it.
  assertSandboxWorks(opts.sandbox);
  await mkdir(config.tmpDir, { recursive: true }); // every conversion's scratch folder is made in it
  // Every converter this process starts is judged by its processor time (QUIRE_CONVERTER_STALL_SECONDS).
  configureStallWindow(config.converterStallMs);
  const office = new OfficeConverter({ slots: config.officeSlots, timeoutMs: config.officeTimeoutMs, restartEvery: config.officeRestartEvery, workDir: opts.officeDir, sandbox: opts.sandbox });
  started(() => office.close());
  if (opts.startOffice !== false) await office.start();
  if (opts.stopping?.()) return undefined;

  const metrics = createMetrics({ role: "worker" });
  registerQueueGauges(metrics, services.store.jobs);
  const worker = startWorker({
    jobs: services.store.jobs,
    registry: jobRegistry({ ...opts, office }),
    log,
    concurrency: config.workerConcurrency,
    maxRunningPerAccount: config.jobsPerAccount,
    newcomerSlots: config.newcomerSlots,
    leaseMs: config.jobLeaseMs,
    heartbeatMs: timings.heartbeatMs ?? Math.max(500, Math.floor(config.jobLeaseMs / 4)),
    pollMs: timings.pollMs,
    // Opened by the worker and closed by its stop, whoever stops it.
    watchQueuedJobs: (onQueued) => services.store.watchQueuedJobs(onQueued, log),
    jobTimeoutMs: config.jobTimeoutMs,
    maxAttempts: config.maxAttempts,
    diskWait: { retryMs: timings.diskFullRetryMs ?? 60_000, forMs: config.diskFullWaitMs },
    retryBaseMs: timings.retryBaseMs,
    retryMaxMs: timings.retryMaxMs,
    stopGraceMs: timings.stopGraceMs,
    onRunEnd: jobMetricsHook(metrics, async (id) => (await services.store.documents.getForConversion(id))?.orgDocType),
  });
  started(() => worker.stop());
  if (opts.sweeps !== false) started(startSweeps(opts, metrics));

  let opsPort: number | undefined;
  if (config.metricsPort !== undefined) {
    const disk: Record<string, ReadinessCheck> = services.diskSpace ? { disk: diskCheck(services.diskSpace) } : {};
    const checks = { store: () => services.store.ping(), blobs: services.checkBlobs, ...disk, converter: officeCheck(office) };
    const ops = await startOpsServer({ host: config.host, port: config.metricsPort, checks, metrics });
    started(() => ops.close());
    opsPort = ops.port;
  }
  return { worker, office, opsPort };
}

/** Overdue documents failed, orphan blobs removed: once now, then periodically; answers how to stop them. */
function startSweeps({ config, services, log }: WorkerRoleOptions, metrics: Metrics): () => Promise<void> {
  const onUnknownKind = () => metrics.jobsFinished.inc({ outcome: "unknown_kind" });
  const sweepOnce = () =>
    Promise.all([
      sweep({ store: services.store, blobs: services.blobs, log, jobKind: CONVERT_DOCUMENT, maxProcessingMs: config.maxProcessingMs, diskWaitMs: config.diskFullWaitMs, onUnknownKind }),
      sweepWebhookDeliveries({ store: services.store, log, historyMs: WEBHOOK_HISTORY_MS }),
    ]).catch((err: unknown) => log.error({ err }, "sweep failed"));
  void sweepOnce();
  const sweeper = setInterval(() => void sweepOnce(), 60_000);
  // Never shorter than one conversion may run: its scratch folder and blobs are in use until then.
  const orphanGraceMs = Math.max(config.orphanGraceMs, config.jobTimeoutMs);
  const orphanSweepOnce = () =>
    sweepOrphanBlobs({ blobs: services.blobs, references: services.store.blobReferences, log, graceMs: orphanGraceMs, scratchDir: config.tmpDir }).catch(
      (err: unknown) => log.error({ err }, "orphan clean-up failed"),
    );
  void orphanSweepOnce();
  // Crashes are rare and the grace period long: a few passes per grace period are plenty.
  const orphanSweeper = setInterval(() => void orphanSweepOnce(), Math.min(orphanGraceMs / 4, 15 * 60_000));
  return async () => {
    clearInterval(sweeper);
    clearInterval(orphanSweeper);
  };
}
