import { AjvCompiler } from "@fastify/ajv-compiler";
import Fastify, { type FastifyInstance } from "fastify";
import type { ApiDeps } from "./api/actions/action.ts";
import { registerApiRoutes } from "./api/api-routes.ts";
import { PreauthBudget } from "./api/preauth-budget.ts";
import { bucketOf, createRateLimiter, type RateLimiter } from "./api/rate-limit.ts";
import type { Config } from "./config.ts";
import { AccessLog } from "./ops/access-log.ts";
import { registerCspReports } from "./ops/csp-reports.ts";
import { registerOpsRoutes, type AppOps } from "./ops/ops-routes.ts";
import { requestIdOf } from "./ops/request-id.ts";
import { registerRequestOutcome } from "./ops/request-outcome.ts";
import { countingUploads } from "./ops/upload-metrics.ts";
import { guardedSpool } from "./uploads/disk-guard.ts";
import { registerAppRoutes } from "./web/app/app-plugin.ts";
import { CSP_REPORT_PATH } from "./web/web-headers.ts";
import { registerWebRoutes } from "./web/web-routes.ts";
import { registerV2Routes } from "./api/v2/v2-plugin.ts";

export interface AppOptions {
  deps: ApiDeps;
  /** Where uploads are spooled: on the blob file system (a rename takes them over), or a local folder for S3. */
  spool: { tempPath(): Promise<string> };
  /** Serve only the upload endpoint, at /1_0 (QUIRE_UPLOAD_PORT). */
  uploadOnly?: boolean;
  logger?: boolean | object;
  /** Error 012; by default one limiter per configuration, shared by every app built with it. */
  rateLimiter?: RateLimiter;
  /** Bytes of unauthenticated upload bodies on disk; by default one per configuration, like the limiter. */
  preauthBudget?: PreauthBudget;
  /** Metrics and health checks: /healthz, /readyz, /metrics, and API answers counted by action and code. */
  ops?: AppOps;
}

const limiters = new WeakMap<Readonly<Config>, RateLimiter>();

/**
 * The API server and the separate upload port (QUIRE_UPLOAD_PORT) are built with the same
 * configuration, so they count a key's requests together.
 */
function rateLimiterFor(config: Readonly<Config>): RateLimiter {
  let limiter = limiters.get(config);
  if (!limiter) {
    limiter = createRateLimiter({ burst: config.rateBurst, perSecond: config.ratePerSecond });
    limiters.set(config, limiter);
  }
  return limiter;
}

const budgets = new WeakMap<Readonly<Config>, PreauthBudget>();

/** Like the rate limiter: the main and the upload port spool to the same disk, so they share one budget. */
function preauthBudgetFor(config: Readonly<Config>): PreauthBudget {
  let budget = budgets.get(config);
  if (!budget) {
    budget = new PreauthBudget({ totalBytes: config.preauthSpoolBytes, perAddressBytes: config.preauthSpoolBytesPerAddress });
    budgets.set(config, budget);
  }
  return budget;
}

/** Fastify's trustProxy: a hop count is the function Fastify itself makes of a number (its types take none). */
function trustProxyOption(t: Config["trustProxy"]): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (t === false) return false;
  if (typeof t === "number") return (_address: string, hop: number) => hop < t;
  return [...t];
}

/**
 * Fastify's own validator compiler (the default), made once for the process rather than once per
 * app: Ajv keeps what it compiled by schema, so a second app in the process (the tests start
 * hundreds) reuses the validators of the first, where each compiled them all again (about 85 ms
 * of processor time an app).
 */
const VALIDATORS = AjvCompiler();

/** Builds the HTTP app without listening, so tests and `quire serve` share it. */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    logController: new AccessLog(),
    // Left unparsed: the API reads the raw bytes itself (strict UTF-8, repeated names are errors),
    // and parsing every signed request twice is a cost on the busiest path. The public pages
    // parse theirs (registerWebRoutes); `req.query` is empty everywhere else.
    routerOptions: { ignoreTrailingSlash: true, querystringParser: () => ({}) },
    // A 100 MiB upload on a slow link may take many minutes, so no limit on the whole request; a
    // connection idle for QUIRE_CONNECTION_TIMEOUT_SECONDS (a minute) is closed instead (slowloris).
    requestTimeout: 0,
    connectionTimeout: opts.deps.config.connectionTimeoutMs,
    // A client trickling header bytes is never idle; Node bounds the headers as a whole, checking
    // connections at an interval that must be well under that bound to enforce it.
    http: {
      headersTimeout: opts.deps.config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(opts.deps.config.headersTimeoutMs / 4))),
    },
    return503OnClosing: true,
    genReqId: requestIdOf,
    // Off by default: X-Forwarded-* are the client's to forge unless a proxy the operator named
    // sent them. req.ip (every per-address limit), req.protocol and req.host follow this.
    trustProxy: trustProxyOption(opts.deps.config.trustProxy),
    schemaController: { compilersFactory: { buildValidator: VALIDATORS } },
  });
  // The API reads its own bodies (streamed multipart, strict form decoding); Fastify must not consume them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_req, _payload, done) => done(null, undefined));

  registerRequestOutcome(app);
  // A page that meets an unreachable database says so and when to come back, rather than 500.
  app.setErrorHandler((err, req, reply) => {
    if (opts.deps.store.isUnavailable(err)) {
      req.log.warn({ err }, "the database is unavailable");
      return reply.code(503).header("retry-after", "5").header("cache-control", "no-store").type("text/plain; charset=utf-8")
        .send("Quire cannot reach its database just now. Please try again in a moment.\n");
    }
    // Everything else as Fastify answers it by default (status from the error, 500 logged).
    throw err;
  });
  const limiter = opts.rateLimiter ?? rateLimiterFor(opts.deps.config);
  if (opts.ops) registerOpsRoutes(app, opts.ops);
  // Uploads through the API and the app's upload page are counted alike.
  const uploadDeps = opts.ops ? { ...opts.deps, blobs: countingUploads(opts.deps.blobs, opts.ops.metrics.uploadBytes) } : opts.deps;
  // No new file is spooled while the data disk is short of space (012; src/uploads/disk-guard.ts).
  const spool = guardedSpool(opts.spool, opts.deps.diskSpace);
  registerApiRoutes(app, {
    deps: uploadDeps,
    tempPath: () => spool.tempPath(),
    allowRequest: (apiKey, signed) => limiter.allow(bucketOf(apiKey, signed)),
    preauth: opts.preauthBudget ?? preauthBudgetFor(opts.deps.config),
    paths: opts.uploadOnly ? { normal: [], upload: ["/1_0"] } : { normal: ["/1_0"], upload: ["/upload/1_0"] },
  });
  // The public pages (decisions §10) and the publisher's app at /app (§13) live on the main port only.
  if (!opts.uploadOnly) {
    // The current Issuu API beside v1 (decisions §14): bearer tokens, JSON, its own parsers.
    await registerV2Routes(app, { ...uploadDeps, tempPath: () => opts.spool.tempPath(), rateLimiter: limiter });
    // The app's upload page spools where the API does (a rename hands the file to the blob store).
    await registerAppRoutes(app, { ...uploadDeps, spool, ...(opts.ops ? { registry: opts.ops.metrics.registry } : {}) });
    await registerWebRoutes(app, opts.deps);
    // What the pages' Content-Security-Policy blocked, as browsers report it.
    registerCspReports(app, { path: CSP_REPORT_PATH, ...(opts.ops ? { registry: opts.ops.metrics.registry } : {}) });
  }
  return app;
}
