import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.ts";
import type { Config } from "./config.ts";
import { accessLogDestination, flushAccessLog, httpLoggerOptions } from "./ops/access-log.ts";
import { diskCheck } from "./ops/disk-check.ts";
import { createMetrics, registerQueueGauges } from "./ops/metrics.ts";
import type { ReadinessCheck } from "./ops/health.ts";
import type { Services } from "./services.ts";

/**
 * The API role, assembled once: `quire serve`, the tests' servers and the benchmarks start it
 * here, so the wiring they exercise (metrics, health checks, access log, the separate upload port)
 * is the one that ships. The process around it (signals, the demo account, the supervised worker)
 * is `src/cli/serve-command.ts`'s.
 */

export interface ApiRoleOptions {
  config: Readonly<Config>;
  services: Pick<Services, "store" | "blobs" | "checkBlobs"> & Partial<Pick<Services, "diskSpace">>;
  /** Readiness checks beyond the store's and the blobs' (the supervised worker's, for `quire serve`). */
  checks?: Record<string, ReadinessCheck>;
  /** Where the API listens; by default QUIRE_HOST and QUIRE_PORT (tests: port 0). */
  listen?: { host: string; port: number };
  /** The access log; by default the one line per request at QUIRE_LOG_LEVEL, to stdout, buffered. */
  logger?: boolean | object;
  /** Where `logger` writes, if buffered: written out when the role is closed. */
  logStream?: ReturnType<typeof accessLogDestination>;
}

export interface RunningApiRole {
  app: FastifyInstance;
  /** The API's address, `http://host:port`. */
  address: string;
  /** The upload port's address (QUIRE_UPLOAD_PORT), when configured. */
  uploadAddress?: string;
  /**
   * Stops taking requests (new ones get 503 at once); those in flight get `graceMs`, then their
   * connections are cut.
   */
  close(graceMs?: number): Promise<void>;
}

export async function startApiRole(opts: ApiRoleOptions): Promise<RunningApiRole> {
  const { config, services } = opts;
  const { store, blobs } = services;
  const deps = { config, store, blobs, diskSpace: services.diskSpace };
  const logStream = opts.logger !== undefined ? opts.logStream : config.logLevel === "silent" ? undefined : accessLogDestination();
  const logger = opts.logger ?? httpLoggerOptions(config.logLevel, logStream);
  const metrics = createMetrics({ role: "api" });
  registerQueueGauges(metrics, store.jobs);
  const disk: Record<string, ReadinessCheck> = services.diskSpace ? { disk: diskCheck(services.diskSpace) } : {};
  const ops = { metrics, checks: { store: () => store.ping(), blobs: services.checkBlobs, ...disk, ...opts.checks } };
  const app = await buildApp({ deps, spool: blobs, logger, ops });
  const apps = [app];
  const close = async (graceMs = 0) => {
    const cut = setTimeout(() => apps.forEach((a) => a.server.closeAllConnections()), graceMs);
    await Promise.all(apps.map((a) => a.close()));
    clearTimeout(cut);
    // Every request is answered and logged by now: a normal stop loses no line.
    if (logStream) await flushAccessLog(logStream);
  };
  const listen = opts.listen ?? { host: config.host, port: config.port };
  const address = await app.listen(listen);
  if (config.uploadPort === undefined) return { app, address, close };
  try {
    // Built with the same configuration: they count a key's requests and spool bytes together.
    const uploadApp = await buildApp({ deps, spool: blobs, logger, uploadOnly: true, ops });
    apps.push(uploadApp);
    const uploadAddress = await uploadApp.listen({ host: listen.host, port: config.uploadPort });
    return { app, address, uploadAddress, close };
  } catch (err) {
    // A server that cannot listen on both ports leaves neither open.
    await close();
    throw err;
  }
}
