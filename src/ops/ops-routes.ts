import type { FastifyInstance } from "fastify";
import type { ReadinessCheck } from "./health.ts";
import { opsAnswer } from "./health.ts";
import type { Metrics } from "./metrics.ts";
import { outcomeOf } from "./request-outcome.ts";

export interface AppOps {
  metrics: Metrics;
  /** /readyz checks by name: store, blobs and, for a process that converts, the converter. */
  checks: Record<string, ReadinessCheck>;
}

/** /healthz, /readyz and /metrics, the request id echoed back, and every API answer counted. */
export function registerOpsRoutes(app: FastifyInstance, ops: AppOps): void {
  for (const path of ["/healthz", "/readyz", "/metrics"]) {
    app.get(path, async (_req, reply) => {
      const answer = (await opsAnswer(path, ops.checks, ops.metrics))!;
      return reply.code(answer.status).header("cache-control", "no-store").type(answer.contentType).send(answer.body);
    });
  }
  // Callback hooks: an async one costs a promise per request on every route.
  app.addHook("onRequest", (req, reply, done) => {
    reply.header("x-request-id", req.id);
    done();
  });
  app.addHook("onResponse", (req, _reply, done) => {
    const path = req.routeOptions.url;
    if (path !== undefined && path.endsWith("/1_0")) {
      const { action, code } = outcomeOf(req);
      ops.metrics.requests.inc({ action, code });
    }
    done();
  });
}
