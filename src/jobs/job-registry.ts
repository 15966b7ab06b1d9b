import { JOB_KINDS, type JobKind } from "../domain/job-kinds.ts";
import type { Job } from "../store/jobs.ts";

export type JobOutcome = "success" | "failed" | "skipped";

export interface JobContext {
  job: Job;
  /** Aborted when the lease is lost, the job times out, or the worker stops: stop work at once. */
  signal: AbortSignal;
}

/**
 * One shape for every job kind: `run` re-reads its state by id, does the heavy work outside any
 * transaction and records the result in one short transaction, so a second run is harmless.
 * `giveUp` records a final failure (the document ends in F) when retries are exhausted or the
 * error is permanent. Failures are reported as `JobFailure`s (src/domain/job-failure.ts); anything
 * else counts as transient trouble.
 */
export interface JobHandler {
  run(ctx: JobContext): Promise<JobOutcome>;
  giveUp(job: Job, error: unknown): Promise<void>;
}

/** One handler per job kind: built as one literal object (src/worker-role.ts's jobRegistry), complete by its type. */
export type JobRegistry = Readonly<Record<JobKind, JobHandler>>;

/**
 * Every job kind the store can hold (JOB_KINDS) must have exactly one handler; a worker refuses to
 * start otherwise (the compiler already says so of the registry it is given; this keeps a registry
 * made otherwise, in a test, honest). `kinds` is there for tests only.
 */
export function checkRegistry(registry: Readonly<Record<string, JobHandler>>, kinds: readonly string[] = JOB_KINDS): void {
  const missing = kinds.filter((k) => !Object.hasOwn(registry, k));
  const unknown = Object.keys(registry).filter((k) => !kinds.includes(k));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(`job registry mismatch: no handler for [${missing.join(", ")}], handler for unknown kinds [${unknown.join(", ")}]`);
  }
}
