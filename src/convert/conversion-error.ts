import { FAILURE_CODES, JobFailure, type FailureKind, type JobFailureOptions } from "../domain/job-failure.ts";

/** The failure codes of decisions §6, under the name the converters have always used. */
export const CONVERSION_ERROR_CODES = FAILURE_CODES;

export type ConversionErrorKind = FailureKind;

/** A converter's failure: a JobFailure, so the job runner retries it or not without knowing conversions. */
export class ConversionError extends JobFailure {
  constructor(kind: ConversionErrorKind, message: string, opts: JobFailureOptions = {}) {
    super(kind, message, opts);
    this.name = "ConversionError";
  }
}
