import type { Logger } from "pino";
import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import type { Store } from "../store/open-store.ts";
import { DISK_WAIT_MARK, FAILURE_CODES } from "../domain/job-failure.ts";
import { JOB_KINDS, type JobKind } from "../domain/job-kinds.ts";

export interface SweepOptions {
  store: Store;
  log: Logger;
  /** The kind that brings a document out of P, re-enqueued for a document whose job was lost. */
  jobKind: JobKind;
  /** No document stays in P longer than this (decisions §6). */
  maxProcessingMs: number;
  /**
   * A document whose job waits for disk space (QUIRE_DISK_FULL_WAIT_HOURS) is overdue only this
   * much later than the others: the worker ends it itself, saying the disk was full.
   */
  diskWaitMs?: number;
  batch?: number;
  now?: () => number;
  /** Where a replacement failed for a lost job left its files (serving nobody now); unset: the orphan clean-up takes them. */
  blobs?: Pick<BlobStore, "deletePrefix">;
  /** Told of each job failed for its unknown kind (the worker counts them in its metrics). */
  onUnknownKind?: (job: { id: number; kind: string }) => void;
}

export interface SweepReport {
  requeued: number;
  failed: number;
  overdue: number;
  unknownKinds: number;
}

/**
 * Heals what crashes leave behind. Expired leases need nothing here (claimNext takes them over);
 * this finds documents in P whose job is missing (re-enqueued) or ended without them (F, 9), and
 * documents in P past the time bound (F, 9, their jobs ended). Every change is guarded by the
 * state, so sweepers in several workers at once are harmless. Queued jobs of a kind no handler
 * exists for are failed once they are older than the time bound, each with a log line.
 */
export async function sweep(opts: SweepOptions): Promise<SweepReport> {
  const now = (opts.now ?? Date.now)();
  const batch = opts.batch ?? 500;
  const { documents, jobs } = opts.store;
  const report: SweepReport = { requeued: 0, failed: 0, overdue: 0, unknownKinds: 0 };

  // Jobs of a kind this version has no handler for are never claimed here. A newer worker of a
  // rolling upgrade may know them, so only those older than any conversion may take are failed.
  for (const job of await jobs.failUnknownKinds(JOB_KINDS, now - opts.maxProcessingMs, now, batch)) {
    opts.log.error({ jobId: job.id, kind: job.kind, documentId: job.documentId }, "job of an unknown kind failed: no worker handles it");
    opts.onUnknownKind?.(job);
    report.unknownKinds++;
  }
  const waiting = opts.diskWaitMs ? { mark: DISK_WAIT_MARK, cutoff: now - opts.maxProcessingMs - opts.diskWaitMs } : undefined;
  for (const documentId of await jobs.findOverdue(now - opts.maxProcessingMs, batch, waiting)) {
    // Its jobs end first: failing it writes its webhook delivery's job, which must not be ended with them.
    await jobs.failAllFor(documentId, "document overdue", now);
    if (await documents.markFailed(documentId, FAILURE_CODES.internal, "The conversion did not finish in time.", now)) report.overdue++;
  }
  for (const s of await jobs.findStranded(batch)) {
    if (s.hasEndedJob) {
      if (await documents.markFailed(s.documentId, FAILURE_CODES.internal, "The conversion stopped unexpectedly.", now)) report.failed++;
    } else {
      await jobs.enqueue(opts.jobKind, s.documentId, s.accountId, now);
      report.requeued++;
    }
  }
  // A new file converting beside a published document whose job is gone (src/domain/document-replacement.ts).
  const stranded = await opts.store.replacements.failStranded(now, batch);
  report.failed += stranded.length;
  for (const blobId of stranded) await opts.blobs?.deletePrefix(blobKeys.prefix(blobId)).catch(() => undefined);
  if (report.requeued + report.failed + report.overdue > 0) opts.log.warn(report, "sweeper healed documents");
  return report;
}
