import type { Metrics } from "./metrics.ts";

/** A readiness check: resolves when its dependency can be used now. */
export type ReadinessCheck = () => Promise<void>;

export interface OpsAnswer {
  status: number;
  contentType: string;
  body: string;
}

const CHECK_TIMEOUT_MS = 5_000;

function withTimeout(check: ReadinessCheck): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer));
}

/** /readyz: every check in parallel; 503 naming the failing ones, so an orchestrator and a human both learn something. */
export async function readiness(checks: Record<string, ReadinessCheck>): Promise<OpsAnswer> {
  const names = Object.keys(checks);
  const results = await Promise.allSettled(names.map((n) => withTimeout(checks[n]!)));
  const report: Record<string, string> = {};
  results.forEach((r, i) => (report[names[i]!] = r.status === "fulfilled" ? "ok" : String((r.reason as Error)?.message ?? r.reason)));
  const ready = results.every((r) => r.status === "fulfilled");
  return { status: ready ? 200 : 503, contentType: "application/json", body: JSON.stringify({ status: ready ? "ok" : "unavailable", checks: report }) };
}

/** /healthz: the process answers; nothing else is looked at, so a slow database never gets it restarted. */
export function liveness(): OpsAnswer {
  return { status: 200, contentType: "application/json", body: '{"status":"ok"}' };
}

export async function metricsAnswer(metrics: Metrics): Promise<OpsAnswer> {
  return { status: 200, contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
}

/** The three operations paths, shared by the API (Fastify) and the worker's small server. */
export async function opsAnswer(path: string, checks: Record<string, ReadinessCheck>, metrics: Metrics): Promise<OpsAnswer | undefined> {
  switch (path) {
    case "/healthz":
      return liveness();
    case "/readyz":
      return readiness(checks);
    case "/metrics":
      return metricsAnswer(metrics);
    default:
      return undefined;
  }
}
