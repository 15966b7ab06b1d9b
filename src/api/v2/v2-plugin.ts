import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { QuireError } from "../../domain/errors.ts";
import { SizeBoundedLru } from "../../size-bounded-lru.ts";
import { addressGroup } from "../../ops/client-address.ts";
import { linkOrigin } from "../../ops/request-origin.ts";
import { authenticateBearer, TokenGuessLimit } from "./v2-auth.ts";
import { V2_OPERATIONS } from "./v2-operations.ts";
import { V2Error, type V2Caller, type V2Deps } from "./v2-operation.ts";

/** JSON bodies larger than this are 413 (no v2 body the clients send comes near it). */
export const MAX_V2_JSON_BYTES = 256 * 1024;

/** Answers of cacheable operations kept (as v1 keeps `documents.list`'s), least recently used out first. */
const ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PATCH, DELETE, OPTIONS",
  "access-control-allow-headers": "Authorization, Content-Type",
  "access-control-max-age": "600",
  // A browser app may read its budget (research §4.4).
  "access-control-expose-headers": "x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, retry-after",
} as const;

declare module "fastify" {
  interface FastifyRequest {
    v2Caller?: V2Caller;
  }
}

/** How long a request past its token's budget may be held for a free place before it is 429. */
const MAX_PACE_MS = 2_000;
/** Requests of one token held at once; past them a request over budget is 429 at once. */
const MAX_PACED_PER_TOKEN = 16;
const pacedNow = new Map<string, number>();

/**
 * The budget a request takes, held for a place when a short wait gives it one. The clients poll a
 * draft in a loop without any pause (the SDK's tests, WordPress: research §2.7 item 9) and break on
 * a 429; held, such a loop just runs at the sustained rate. A wait longer than MAX_PACE_MS, or more
 * held requests of a token than MAX_PACED_PER_TOKEN, is refused as before.
 */
async function paced(limiter: NonNullable<V2Deps["rateLimiter"]>, key: string): Promise<ReturnType<NonNullable<V2Deps["rateLimiter"]>["takeWithStatus"]>> {
  let budget = limiter.takeWithStatus(key);
  if (budget === undefined || budget.waitMs === 0 || budget.waitMs > MAX_PACE_MS || (pacedNow.get(key) ?? 0) >= MAX_PACED_PER_TOKEN) return budget;
  const deadline = Date.now() + MAX_PACE_MS;
  pacedNow.set(key, (pacedNow.get(key) ?? 0) + 1);
  try {
    while (budget !== undefined && budget.waitMs > 0 && Date.now() + budget.waitMs <= deadline) {
      await sleep(budget.waitMs);
      budget = limiter.takeWithStatus(key);
    }
    return budget;
  } finally {
    const left = (pacedNow.get(key) ?? 1) - 1;
    if (left === 0) pacedNow.delete(key);
    else pacedNow.set(key, left);
  }
}

/** The query string as a flat object (the server's parser leaves `req.query` empty: src/app.ts); a repeated name keeps its first value. */
function parseQuery(url: string): Record<string, string> {
  const q = url.indexOf("?");
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (q < 0) return out;
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) if (!(k in out) && k !== "__proto__") out[k] = v;
  return out;
}

function origin(deps: V2Deps, req: FastifyRequest): string {
  return linkOrigin(deps.config, req).origin ?? "http://localhost";
}

function answerError(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  return reply.code(status).headers(CORS_HEADERS).type("application/json").send(JSON.stringify(body));
}

/** The JSON answer of any failure: `{message}` (with `fields` on a validation error, as the C# client models it). */
function onError(err: FastifyError | V2Error | QuireError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof V2Error) return answerError(reply, err.status, { message: err.message, ...err.extra });
  if (err instanceof QuireError) {
    if (err.code === "205") return answerError(reply, 413, { message: "File too large" });
    return answerError(reply, 400, { message: err.message, ...(err.field ? { fields: { [err.field]: { message: err.message } } } : {}) });
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    const first = fe.validation[0];
    const path = (first?.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
    const field = first?.keyword === "required" ? String((first.params as { missingProperty?: string }).missingProperty ?? path) : path;
    const where = fe.validationContext ?? "body";
    const name = field === "" ? where : field;
    return answerError(reply, 400, { message: `${where}/${name} ${first?.message ?? "is invalid"}`, fields: { [name]: { message: first?.message ?? "is invalid" } } });
  }
  if (fe.statusCode === 413) return answerError(reply, 413, { message: "Request body is too large" });
  if (fe.statusCode === 415) return answerError(reply, 415, { message: "Unsupported content type" });
  if (fe.statusCode !== undefined && fe.statusCode >= 400 && fe.statusCode < 500) return answerError(reply, fe.statusCode, { message: "Invalid request body" });
  req.log.error({ err }, "v2 operation failed");
  return answerError(reply, 500, { message: "Internal error" });
}

/**
 * The v2 API at `/v2/` (decisions §14): bearer tokens, JSON in and out, every success 200, CORS
 * for browser apps (any origin, no cookies: only the `Authorization` header is read), the bodies
 * the real clients send (an empty body or `[]` with a JSON type, string booleans, trailing
 * slashes) accepted. One module per operation (src/api/v2/operations/).
 */
export async function registerV2Routes(app: FastifyInstance, deps: V2Deps): Promise<void> {
  const guesses = new TokenGuessLimit();
  // Kept as the bytes sent; looked up right after the token, before anything else of the request is read.
  const answers = new SizeBoundedLru<string, Buffer>({ maxTotal: ANSWER_CACHE_BYTES, maxEntry: ANSWER_CACHE_BYTES / 8 }, (k, v) => k.length + v.length);
  /** The whole question: account and version, the address asked (path and query), the origin links are written with. */
  const cacheKeyOf = (req: FastifyRequest): string | undefined =>
    (req.routeOptions.config as { cacheable?: boolean } | undefined)?.cacheable === true && req.v2Caller
      ? `${req.v2Caller.accountId}/${req.v2Caller.documentsVersion}/${origin(deps, req)}${req.url}`
      : undefined;
  await app.register(
    async (v2) => {
      v2.removeAllContentTypeParsers();
      // __proto__ and constructor keys are dropped, never merged into an object.
      const parseJson = v2.getDefaultJsonParser("remove", "remove");
      v2.addContentTypeParser("application/json", { parseAs: "string", bodyLimit: MAX_V2_JSON_BYTES }, (req, body, done) => {
        const text = String(body);
        // WordPress and PHP send an empty body or `[]` with this type (research §2.7 items 1-2).
        if (text.trim() === "") return done(null, {});
        void parseJson(req, text, (err, value) => {
          if (err) return done(err as Error);
          done(null, Array.isArray(value) && value.length === 0 ? {} : value);
        });
      });
      // Axios 1.x types a POST or PATCH sent without data (the TS SDK's fullscreen and QR code calls
      // without options) as a form: its empty body is an empty object; any other body of another type is 415.
      v2.addContentTypeParser("*", { parseAs: "string", bodyLimit: MAX_V2_JSON_BYTES }, (_req, body, done) => {
        if (String(body) === "") return done(null, {});
        done(Object.assign(new Error("Unsupported content type"), { statusCode: 415 }));
      });
      // The upload reads its own stream (src/uploads/upload-reader.ts).
      v2.addContentTypeParser("multipart/form-data", (_req, _payload, done) => done(null, undefined));
      v2.setErrorHandler(onError);
      v2.setNotFoundHandler((_req, reply) => answerError(reply, 404, { message: "Not Found" }));

      v2.addHook("onRequest", async (req, reply) => {
        reply.headers(CORS_HEADERS);
        if (req.method === "OPTIONS") return;
        if ((req.routeOptions.config as { public?: boolean } | undefined)?.public === true) {
          (req as { query: unknown }).query = parseQuery(req.url);
          return;
        }
        req.v2Caller = await authenticateBearer(
          deps.store.apiTokens, guesses, req.headers.authorization, () => addressGroup(req.ip), Date.now(),
        );
        // v1's rate per token, told on every answer as the C# client reads it (research §4.4): reset in epoch seconds.
        const budget = deps.rateLimiter === undefined ? undefined : await paced(deps.rateLimiter, `v2/${req.v2Caller.tokenHash}`);
        if (budget !== undefined) {
          reply.headers({
            "x-ratelimit-limit": String(budget.limit),
            "x-ratelimit-remaining": String(budget.remaining),
            "x-ratelimit-reset": String(Math.ceil(budget.resetMs / 1000)),
          });
          if (budget.waitMs > 0) {
            reply.header("retry-after", String(Math.ceil(budget.waitMs / 1000)));
            throw new V2Error(429, "Too many requests; try again later");
          }
        }
        const key = cacheKeyOf(req);
        const hit = key === undefined ? undefined : answers.get(key);
        if (hit !== undefined) return reply.code(200).type("application/json").send(hit);
        (req as { query: unknown }).query = parseQuery(req.url);
      });
      // A body-less POST or PATCH (axios with no data) is an empty object.
      v2.addHook("preValidation", async (req) => {
        if (req.body === undefined || req.body === null) (req as { body: unknown }).body = {};
      });
      // Preflights: allowed for every v2 path, without a token (browsers send none).
      v2.options("/*", async (_req, reply) => reply.code(200).send());

      for (const op of V2_OPERATIONS) {
        v2.route({
          method: op.method,
          url: op.url,
          schema: op.schema,
          config: { public: op.public === true, cacheable: op.cacheable === true },
          handler: async (req, reply) => {
            const caller = req.v2Caller!;
            const base = origin(deps, req);
            const cacheKey = cacheKeyOf(req);
            const answer = await op.handler({
              caller,
              deps,
              params: req.params as Record<string, string>,
              query: req.query as Record<string, unknown>,
              body: op.rawBody ? {} : ((req.body ?? {}) as Record<string, unknown>),
              origin: base,
              raw: req.raw,
              log: req.log,
              now: Date.now(),
              requestId: String(req.id),
            });
            reply.code(200);
            if ("json" in answer) {
              const body = Buffer.from(JSON.stringify(answer.json), "utf8");
              if (cacheKey !== undefined) answers.set(cacheKey, body);
              return reply.type("application/json").send(body);
            }
            return reply.type(answer.type).send(answer.bytes);
          },
        });
      }
    },
    { prefix: "/v2" },
  );
}
