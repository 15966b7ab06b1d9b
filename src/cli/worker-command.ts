import { mkdir, rm } from "node:fs/promises";
import { basename } from "node:path";
import pino from "pino";
import type { Config } from "../config.ts";
import { OfficeConverter } from "../convert/office-to-pdf.ts";
import { claimOfficeWorkDir } from "../convert/office-workdir.ts";
import { assertSandboxWorks, configureSandbox, type SandboxSettings } from "../convert/sandbox.ts";
import { convertDocumentHandler, CONVERT_DOCUMENT } from "../jobs/convert-document.ts";
import { sweepOrphanBlobs } from "../jobs/orphan-sweep.ts";
import { sweep } from "../jobs/sweeper.ts";
import { startWorker } from "../jobs/worker.ts";
import { officeCheck } from "../ops/converter-check.ts";
import { jobMetricsHook } from "../ops/job-metrics.ts";
import { createMetrics, registerQueueGauges } from "../ops/metrics.ts";
import { startOpsServer } from "../ops/ops-server.ts";
import { openServices } from "../services.ts";
import { blobReferencesRepo } from "../store/blob-references.ts";
import { PAGE_WIDTHS } from "../domain/page-images.ts";

/** `quire worker`: takes conversion jobs from the store until SIGTERM; never loads the HTTP stack. */
export async function workerCommand(config: Readonly<Config>): Promise<void> {
  const log = pino({ level: config.logLevel, base: { role: "worker", pid: process.pid } });
  // Fails closed, before anything is opened: no converter ever runs unconfined unless asked to.
  const sandbox: SandboxSettings = config.unsafeNoSandbox ? { kind: "none" } : { kind: "bwrap", bwrap: config.bwrapPath };
  assertSandboxWorks(sandbox);
  if (sandbox.kind === "none") log.warn("QUIRE_UNSAFE_NO_SANDBOX=1: converters run without a sandbox; a document can make them read this machine's files");
  // Installed before anything starts, so a stop during start-up still closes what was started
  // (LibreOffice runs in process groups of its own and would outlive us otherwise).
  const cleanups: Array<() => Promise<void>> = [];
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => log.error({ err }, "stopping failed"));
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
  // Started by `quire serve`: stop as on SIGTERM when it goes, rather than run on as an orphan.
  if (process.channel) {
    process.channel.unref();
    process.once("disconnect", () => {
      log.warn("the serving process is gone; stopping");
      void stop();
    });
  }

  const services = await openServices(config);
  cleanups.push(() => services.close());
  await mkdir(config.tmpDir, { recursive: true });
  const officeDir = await claimOfficeWorkDir(config.tmpDir);
  configureSandbox(sandbox, basename(officeDir));
  const office = new OfficeConverter({
    slots: config.officeSlots,
    timeoutMs: config.officeTimeoutMs,
    restartEvery: config.officeRestartEvery,
    workDir: officeDir,
  });
  cleanups.push(async () => {
    await office.close();
    await rm(officeDir, { recursive: true, force: true });
  });
  await office.start();
  if (stopping) return;
  // startWorker refuses to start unless this has one handler for every kind of src/domain/job-kinds.ts.
  const registry = new Map([
    [
      CONVERT_DOCUMENT,
      convertDocumentHandler({
        store: services.store,
        blobs: services.blobs,
        office,
        log,
        tmpDir: config.tmpDir,
        fetch: {
          maxBytes: config.maxUploadBytes,
          allowPrivate: config.fetchAllowPrivate,
          connectTimeoutMs: 10_000,
          idleTimeoutMs: 30_000,
          totalTimeoutMs: config.fetchTimeoutMs,
          minBytesPerSecond: config.fetchMinBytesPerSecond,
        },
        pdfLimits: { maxPages: config.maxPages, maxPagePixels: 50_000_000, timeoutMs: 120_000 },
        textBounds: { maxPageChars: config.textMaxPageChars, maxDocumentChars: config.textMaxDocumentChars },
        pageWidths: PAGE_WIDTHS,
        ocr: { languages: config.ocrLanguages, concurrency: config.ocrConcurrency },
      }),
    ],
  ]);
  const metrics = createMetrics({ role: "worker" });
  registerQueueGauges(metrics, services.store.jobs);
  const worker = startWorker({
    jobs: services.store.jobs,
    registry,
    log,
    concurrency: config.workerConcurrency,
    maxRunningPerAccount: config.jobsPerAccount,
    newcomerSlots: config.newcomerSlots,
    leaseMs: config.jobLeaseMs,
    heartbeatMs: Math.max(500, Math.floor(config.jobLeaseMs / 4)),
    pollMs: 500,
    jobTimeoutMs: config.jobTimeoutMs,
    maxAttempts: config.maxAttempts,
    retryBaseMs: 5_000,
    retryMaxMs: 300_000,
    stopGraceMs: 30_000,
    onRunEnd: jobMetricsHook(metrics, async (id) => (await services.store.documents.getForConversion(id))?.orgDocType),
  });
  const sweepOnce = () =>
    sweep({ store: services.store, log, jobKind: CONVERT_DOCUMENT, maxProcessingMs: config.maxProcessingMs }).catch((err: unknown) =>
      log.error({ err }, "sweep failed"),
    );
  void sweepOnce();
  const sweeper = setInterval(sweepOnce, 60_000);
  const references = blobReferencesRepo(services.store.db);
  // Never shorter than one conversion may run: its scratch folder and blobs are in use until then.
  const orphanGraceMs = Math.max(config.orphanGraceMs, config.jobTimeoutMs);
  const orphanSweepOnce = () =>
    sweepOrphanBlobs({ blobs: services.blobs, references, log, graceMs: orphanGraceMs, scratchDir: config.tmpDir }).catch((err: unknown) =>
      log.error({ err }, "orphan clean-up failed"),
    );
  void orphanSweepOnce();
  // Crashes are rare and the grace period long: a few passes per grace period are plenty.
  const orphanSweeper = setInterval(orphanSweepOnce, Math.min(orphanGraceMs / 4, 15 * 60_000));
  cleanups.push(async () => {
    clearInterval(sweeper);
    clearInterval(orphanSweeper);
    await worker.stop();
  });
  if (config.metricsPort !== undefined) {
    const checks = { store: () => services.store.ping(), blobs: services.checkBlobs, converter: officeCheck(office) };
    const ops = await startOpsServer({ host: config.host, port: config.metricsPort, checks, metrics });
    cleanups.push(() => ops.close());
    log.info({ port: ops.port }, "metrics and health checks listening");
  }
  log.info({ owner: worker.owner, concurrency: config.workerConcurrency }, "worker started");
}
