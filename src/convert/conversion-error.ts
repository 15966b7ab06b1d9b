import { JobFailure, type FailureKind, type JobFailureOptions } from "../domain/job-failure.ts";

export type ConversionErrorKind = FailureKind;

/** A converter's failure: a JobFailure, so the job runner retries it or not without knowing conversions. */
export class ConversionError extends JobFailure {
  constructor(kind: ConversionErrorKind, message: string, opts: JobFailureOptions = {}) {
    super(kind, message, opts);
    this.name = "ConversionError";
  }
}
