/**
 * Why a job ended, as the `errorCode` values of decisions §6 (a document's code whatever job
 * failed on it). Only failures marked `transient` (network trouble, a crashed tool) are retried;
 * any other one would fail the same way again, so it ends the job at once.
 */
export const FAILURE_CODES = {
  fetch: 1,
  format: 2,
  corrupt: 3,
  encrypted: 4,
  limits: 5,
  internal: 9,
} as const;

export type FailureKind = keyof typeof FAILURE_CODES;

/**
 * A failure that is the machine's, never the document's (issue 23 items 0d and 0e):
 * - `disk-full`: the data disk had no room (ENOSPC, a converter's write error, or a failure while
 *   the work folder's file system was short of space). Retried while the disk stays full, for
 *   hours (QUIRE_DISK_FULL_WAIT_HOURS), without using up the job's attempts.
 * - `stalled`: a converter made no progress on the processor (stopped by a signal, or starved by
 *   a busy machine). Retried like other passing trouble (QUIRE_JOB_MAX_ATTEMPTS).
 */
export type MachineFault = "disk-full" | "stalled";

export interface JobFailureOptions {
  transient?: boolean;
  machineFault?: MachineFault;
  cause?: unknown;
  /**
   * What the operator's log needs but the caller must not see (the message is shown to the
   * caller): e.g. which of "no such host" and "private address" a refused fetch was.
   */
  detail?: string;
}

export class JobFailure extends Error {
  readonly kind: FailureKind;
  readonly transient: boolean;
  readonly detail: string | undefined;
  readonly machineFault: MachineFault | undefined;

  /** `message` is a sentence for people: it becomes the document's `errorMessage`. */
  constructor(kind: FailureKind, message: string, opts: JobFailureOptions = {}) {
    super(message, { cause: opts.cause });
    this.name = "JobFailure";
    this.kind = kind;
    this.machineFault = opts.machineFault;
    // The machine's trouble may go differently next time: always worth another try.
    this.transient = (opts.transient ?? false) || opts.machineFault !== undefined;
    this.detail = opts.detail;
  }

  get code(): number {
    return FAILURE_CODES[this.kind];
  }
}

/** Error codes of a file system with no room left (EDQUOT: a quota, the same for us). */
const NO_SPACE_CODES = new Set(["ENOSPC", "EDQUOT"]);

/** Whether `err`, or an error it was caused by (or aggregates), is a file system out of room. */
export function isNoSpaceError(err: unknown, depth = 0): boolean {
  if (depth > 8 || typeof err !== "object" || err === null) return false;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === "string" && NO_SPACE_CODES.has(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isNoSpaceError(x, depth + 1))) return true;
  return isNoSpaceError(e.cause, depth + 1);
}

/** The machine fault `err` is, if any: a JobFailure's own, or a file system out of room anywhere in its causes. */
export function machineFaultOf(err: unknown): MachineFault | undefined {
  if (err instanceof JobFailure && err.machineFault) return err.machineFault;
  return isNoSpaceError(err) ? "disk-full" : undefined;
}

/**
 * How a job waiting for disk space begins its `lastError`: the sweeper gives the documents of such
 * jobs the disk wait's bound instead of the usual processing bound (no migration: the job row
 * already says why it waits).
 */
export const DISK_WAIT_MARK = "waiting for disk space: ";
