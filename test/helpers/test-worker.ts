import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import type { FetchOptions } from "../../src/convert/fetch-url.ts";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { convertDocumentHandler, CONVERT_DOCUMENT } from "../../src/jobs/convert-document.ts";
import { startWorker, type RunningWorker } from "../../src/jobs/worker.ts";
import type { TestServer } from "./test-server.ts";
import { PAGE_WIDTHS } from "../../src/domain/page-images.ts";

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

/** The conversion handler of `quire worker` with the tests' shorter time limits; also used by pdf-worker-child.ts. */
export function testConvertHandler(opts: {
  config: Pick<TestServer["config"], "tmpDir" | "maxUploadBytes" | "maxPages" | "ocrLanguages" | "ocrConcurrency" | "textMaxPageChars" | "textMaxDocumentChars">;
  services: Pick<TestServer["services"], "store" | "blobs">;
  office: OfficeConverter;
  log: pino.Logger;
  allowPrivate: boolean;
  fetch?: TestWorkerOptions["fetch"];
}) {
  const { config, services } = opts;
  return convertDocumentHandler({
    store: services.store,
    blobs: services.blobs,
    office: opts.office,
    log: opts.log,
    tmpDir: config.tmpDir,
    fetch: { maxBytes: config.maxUploadBytes, allowPrivate: opts.allowPrivate, connectTimeoutMs: 5000, idleTimeoutMs: 10_000, totalTimeoutMs: 30_000, ...opts.fetch },
    pdfLimits: { maxPages: config.maxPages, maxPagePixels: 50_000_000, timeoutMs: 60_000 },
    textBounds: { maxPageChars: config.textMaxPageChars, maxDocumentChars: config.textMaxDocumentChars },
    pageWidths: PAGE_WIDTHS,
    ocr: { languages: config.ocrLanguages, concurrency: config.ocrConcurrency },
  });
}

/** The real conversion worker (LibreOffice, poppler), in this process, against a test server's store and blobs. */
export async function startTestWorker(server: TestServer, opts: TestWorkerOptions = {}): Promise<TestWorker> {
  const { config, services } = server;
  const log = pino({ level: "silent" });
  const office = new OfficeConverter({ slots: 2, timeoutMs: opts.officeTimeoutMs ?? 20_000, workDir: join(config.tmpDir, "office") });
  if (opts.startOffice !== false) await office.start();
  else await mkdir(config.tmpDir, { recursive: true }); // which starting the office would have made
  const handler = testConvertHandler({ config, services, office, log, allowPrivate: opts.allowPrivate ?? true, fetch: opts.fetch });
  const worker = startWorker({
    jobs: services.store.jobs,
    registry: new Map([[CONVERT_DOCUMENT, handler]]),
    log,
    concurrency: opts.concurrency ?? 2,
    maxRunningPerAccount: opts.maxRunningPerAccount ?? opts.concurrency ?? 2,
    newcomerSlots: opts.newcomerSlots ?? 0,
    leaseMs: 30_000,
    heartbeatMs: 5_000,
    pollMs: 50,
    jobTimeoutMs: opts.jobTimeoutMs ?? 120_000,
    maxAttempts: opts.maxAttempts ?? 2,
    retryBaseMs: opts.retryBaseMs ?? 100,
    retryMaxMs: opts.retryMaxMs ?? 500,
    stopGraceMs: 5_000,
  });
  return {
    worker,
    office,
    async stop() {
      await worker.stop();
      await office.close();
    },
  };
}
