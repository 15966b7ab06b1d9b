import type { CpuUsage } from "./cpu-watch.ts";
import { JobFailure, type FailureKind, type JobFailureOptions } from "../domain/job-failure.ts";

export type ConversionErrorKind = FailureKind;

/** A converter's failure: a JobFailure, so the job runner retries it or not without knowing conversions. */
export class ConversionError extends JobFailure {
  constructor(kind: ConversionErrorKind, message: string, opts: JobFailureOptions = {}) {
    super(kind, message, opts);
    this.name = "ConversionError";
  }
}

/**
 * A converter held back by the machine (cpu-watch.ts): stopped from outside or starved by other
 * work, it used little processor time while the clock ran. Not the document's fault: retried.
 */
export function stalledFailure(converter: string, why: "stalled" | "starved", usage: CpuUsage): ConversionError {
  const how = why === "stalled" ? "it was stopped or got no processor time" : "the server was too busy";
  return new ConversionError("internal", `${converter} was held back by the server (${how}), so the conversion could not finish.`, {
    machineFault: "stalled",
    detail: `${why}: ${usage.cpuMs} ms of processor time in ${usage.wallMs} ms`,
  });
}
