import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { JobsRepo } from "../store/jobs.ts";

/**
 * Every Prometheus metric Quire exposes, in a registry per process role (tests build several apps
 * in one process, so the global registry is not used). Names follow Prometheus conventions.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<"action" | "code">;
  readonly uploadBytes: Counter;
  readonly jobsFinished: Counter<"outcome">;
  readonly conversionSeconds: Histogram<"format">;
}

export function createMetrics(opts: { role: "api" | "worker" }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role: opts.role });
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: "quire_api_requests_total",
      help: "API requests by action (without prefix) and answer code (ok or the error code)",
      labelNames: ["action", "code"],
      registers: [registry],
    }),
    uploadBytes: new Counter({ name: "quire_upload_bytes_total", help: "Bytes of uploaded originals taken into the blob store", registers: [registry] }),
    jobsFinished: new Counter({
      name: "quire_jobs_finished_total",
      help: "Job runs ended by this process: success, failed, skipped, retry, handed_back, lease_lost; unknown_kind: a queued job no handler exists for, failed by the sweep",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    conversionSeconds: new Histogram({
      name: "quire_conversion_seconds",
      help: "Wall time of one conversion run, by original format",
      labelNames: ["format"],
      buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320, 900],
      registers: [registry],
    }),
  };
}

/**
 * Queue gauges read from the store at scrape time, so every process reports the same cluster-wide
 * figures; only one scrape target needs them, but any may answer.
 */
export function registerQueueGauges(metrics: Metrics, jobs: Pick<JobsRepo, "queueStats">, now: () => number = Date.now): void {
  let pending: Promise<Awaited<ReturnType<JobsRepo["queueStats"]>>> | undefined;
  // One query serves the three gauges of a scrape.
  const stats = () => (pending ??= jobs.queueStats(now()).finally(() => setTimeout(() => (pending = undefined), 100)));
  new Gauge({
    name: "quire_jobs",
    help: "Jobs in the store by state",
    labelNames: ["state"],
    registers: [metrics.registry],
    async collect() {
      const { byState } = await stats();
      this.reset();
      for (const state of ["queued", "running", "done", "failed"]) this.set({ state }, byState[state] ?? 0);
    },
  });
  new Gauge({
    name: "quire_queue_depth",
    help: "Queued jobs that are due now",
    registers: [metrics.registry],
    async collect() {
      this.set((await stats()).due);
    },
  });
  new Gauge({
    name: "quire_queue_oldest_age_seconds",
    help: "How long the oldest due job has waited (0 when none is due)",
    registers: [metrics.registry],
    async collect() {
      const { oldestDueAt } = await stats();
      this.set(oldestDueAt === undefined ? 0 : Math.max(0, (now() - oldestDueAt) / 1000));
    },
  });
}
