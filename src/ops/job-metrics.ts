import type { Job } from "../store/jobs.ts";
import type { Metrics } from "./metrics.ts";

/**
 * The worker's onRunEnd hook: counts runs by outcome and times conversions that reached an end
 * (success or failed) by the original's format, looked up after the run because a URL upload's
 * format is only known once it is fetched.
 */
export function jobMetricsHook(metrics: Metrics, formatOf: (documentId: string) => Promise<string | undefined>) {
  return (job: Job, outcome: string, seconds: number): void => {
    metrics.jobsFinished.inc({ outcome });
    if (outcome !== "success" && outcome !== "failed") return;
    formatOf(job.documentId).then(
      (format) => metrics.conversionSeconds.observe({ format: format ?? "unknown" }, seconds),
      () => metrics.conversionSeconds.observe({ format: "unknown" }, seconds),
    );
  };
}
