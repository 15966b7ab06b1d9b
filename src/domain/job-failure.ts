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

export interface JobFailureOptions {
  transient?: boolean;
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

  /** `message` is a sentence for people: it becomes the document's `errorMessage`. */
  constructor(kind: FailureKind, message: string, opts: JobFailureOptions = {}) {
    super(message, { cause: opts.cause });
    this.name = "JobFailure";
    this.kind = kind;
    this.transient = opts.transient ?? false;
    this.detail = opts.detail;
  }

  get code(): number {
    return FAILURE_CODES[this.kind];
  }
}
