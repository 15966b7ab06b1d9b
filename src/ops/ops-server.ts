import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { opsAnswer, type ReadinessCheck } from "./health.ts";
import type { Metrics } from "./metrics.ts";

/**
 * /healthz, /readyz and /metrics for `quire worker` on QUIRE_METRICS_PORT: node:http only, so a
 * worker never loads the API's HTTP stack for three read-only paths.
 */
export async function startOpsServer(opts: { host: string; port: number; checks: Record<string, ReadinessCheck>; metrics: Metrics }): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const answer = req.method === "GET" ? opsAnswer(path, opts.checks, opts.metrics) : Promise.resolve(undefined);
    answer.then(
      (a) => {
        if (!a) return res.writeHead(req.method === "GET" ? 404 : 405).end();
        res.writeHead(a.status, { "content-type": a.contentType, "cache-control": "no-store" }).end(a.body);
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
