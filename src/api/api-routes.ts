import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { QuireError } from "../domain/errors.ts";
import { ACTIONS, ANSWERS_FROM_DOCUMENTS_ONLY } from "./actions/index.ts";
import { AnswerCache } from "./answer-cache.ts";
import type { ApiDeps, SpooledFile } from "./actions/action.ts";
import { authenticate, isKnownApiKey, type AuthOptions, type Caller, type EndpointKind } from "./authenticate.ts";
import { renderError, renderOk } from "./envelope.ts";
import { outputFormatOf } from "./output-format.ts";
import { addFormEncoded, addQueryString, assertUtf8Charset, parseContentType, RequestParams } from "./params.ts";
import type { PreauthBudget, PreauthHold, Refusal } from "./preauth-budget.ts";
import { readUpload } from "../uploads/upload-reader.ts";
import { refusalAtLimit } from "../uploads/new-document.ts";
import { refusalAtUpdateLimit } from "./actions/document-update.ts";
import { rm } from "node:fs/promises";
import { noteAction, noteErrorCode } from "../ops/request-outcome.ts";
import { diskFullRefusalOf } from "../uploads/disk-guard.ts";

/** A form-encoded body carries at most a few kilobytes of text; this bounds a hostile one. */
const MAX_FORM_BYTES = 1024 * 1024;
const ALLOW = "GET, POST";
/** Room for a few thousand list pages: enough for every active client's polling, bounded. */
const ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

export interface ApiRouteOptions {
  deps: ApiDeps;
  tempPath: () => Promise<string>;
  allowRequest?: AuthOptions["allowRequest"];
  /** Bounds what upload bodies hold on disk before they are authenticated; unbounded without. */
  preauth?: PreauthBudget;
  /** Paths serving each endpoint, e.g. { normal: ["/1_0"], upload: ["/upload/1_0"] }. */
  paths: Record<EndpointKind, string[]>;
}

export function registerApiRoutes(app: FastifyInstance, opts: ApiRouteOptions): void {
  const auth: AuthOptions = {
    accounts: opts.deps.store.accounts,
    prefixes: opts.deps.config.actionPrefixes,
    knownActions: new Set(ACTIONS.keys()),
    allowRequest: opts.allowRequest,
  };
  const answers = new AnswerCache(ANSWER_CACHE_BYTES);
  for (const endpoint of ["normal", "upload"] as const) {
    for (const url of opts.paths[endpoint]) {
      app.route({
        method: ["GET", "POST"],
        url,
        exposeHeadRoute: false,
        handler: (req, reply) => handleApiRequest(req, reply, endpoint, opts, endpoint === "upload" ? oncePerRequest(auth) : auth, answers),
      });
      app.route({
        method: ["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"],
        url,
        handler: (_req, reply) => reply.code(405).header("allow", ALLOW).send(),
      });
    }
  }
}

/**
 * An upload is authenticated twice (before its file and at its end); the rate limit must count
 * the request once, so its first answer is kept for the rest of the request. Other requests are
 * authenticated once and need no such wrapper.
 */
function oncePerRequest(auth: AuthOptions): AuthOptions {
  const allow = auth.allowRequest;
  if (!allow) return auth;
  let answer: boolean | undefined;
  return { ...auth, allowRequest: (apiKey, signed) => (answer ??= allow(apiKey, signed)) };
}

function hasBody(req: FastifyRequest): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

function addQuery(params: RequestParams, rawUrl: string): void {
  const q = rawUrl.indexOf("?");
  if (q !== -1) addQueryString(params, rawUrl.slice(q + 1));
}

/**
 * A request refused at the transport step (error 200, no field) is still answered in the
 * `format` its query string asks for; the query's own defects do not matter then.
 */
function refuse(params: RequestParams, rawUrl: string, failure: QuireError): QuireError {
  try {
    addQuery(params, rawUrl);
  } catch {
    // the request is refused anyway; what could be read is enough to choose the format
  }
  return failure;
}

async function readFormBody(req: FastifyRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req.raw as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_FORM_BYTES) throw new QuireError("201");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function handleApiRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  endpoint: EndpointKind,
  opts: ApiRouteOptions,
  auth: AuthOptions,
  answers: AnswerCache,
): Promise<FastifyReply> {
  const params = new RequestParams();
  let upload: SpooledFile | undefined;
  const hold = endpoint === "upload" ? opts.preauth?.hold(req.ip) : undefined;
  try {
    upload = await readParams(req, endpoint, params, opts, auth, hold);
    const format = outputFormatOf(params);
    const caller = await authenticate(params, endpoint, auth);
    hold?.release(); // the spool is the caller's now
    noteAction(req, caller.action);
    const handler = ACTIONS.get(caller.action)!;
    const cacheKey = ANSWERS_FROM_DOCUMENTS_ONLY.has(caller.action) ? answers.keyFor(caller, params) : undefined;
    const cached = cacheKey === undefined ? undefined : answers.get(cacheKey);
    if (cached) return send(reply, cached);
    const payload = await handler({ params, caller, deps: opts.deps, log: req.log, upload, now: Date.now(), requestId: req.id });
    const rendered = renderOk(format, payload);
    if (cacheKey !== undefined) answers.set(cacheKey, rendered);
    return send(reply, rendered);
  } catch (err) {
    // Gone before the answer: a client that sees the refusal never sees the spooled file.
    if (upload) await rm(upload.path, { force: true });
    let failure: QuireError;
    const diskFull = err instanceof QuireError ? undefined : diskFullRefusalOf(err);
    if (err instanceof QuireError) {
      failure = err;
    } else if (diskFull) {
      // The disk filled while this upload was spooled or stored: the machine's trouble, for now (as
      // the disk guard refuses new uploads), and nothing was kept.
      req.log.warn({ err }, "the data disk filled during an upload; answered 012");
      failure = diskFull;
    } else {
      if (opts.deps.store.isUnavailable(err)) {
        req.log.warn({ err }, "the database is unavailable; answered 500");
        reply.header("retry-after", "5");
      } else {
        req.log.error({ err }, "unexpected failure");
      }
      // Gone is told by the socket: Node marks a request `destroyed` as soon as its body is read,
      // so that flag would leave every POST that met an error unanswered.
      if (req.raw.socket?.destroyed ?? true) return reply;
      failure = new QuireError("500");
    }
    // An upload refused before its end: say so, then close, rather than read the rest of it.
    if (!req.raw.complete) reply.header("connection", "close");
    noteErrorCode(req, failure.code);
    return send(reply, renderError(outputFormatOf(params), failure));
  } finally {
    if (upload) await rm(upload.path, { force: true });
    hold?.release();
  }
}

function send(reply: FastifyReply, rendered: { contentType: string; body: string | Buffer }): FastifyReply {
  return reply.code(200).header("cache-control", "no-store").type(rendered.contentType).send(rendered.body);
}

/** Step 1 of decisions §2: method, content type, encoding; then every parameter into `params`. */
async function readParams(
  req: FastifyRequest,
  endpoint: EndpointKind,
  params: RequestParams,
  opts: ApiRouteOptions,
  auth: AuthOptions,
  hold: PreauthHold | undefined,
): Promise<SpooledFile | undefined> {
  const header = req.headers["content-type"];
  const rawUrl = req.raw.url ?? "";
  if (req.method === "GET") {
    if (header !== undefined || endpoint === "upload") throw refuse(params, rawUrl, new QuireError("200"));
    addQuery(params, rawUrl);
    return undefined;
  }
  if (header === undefined) {
    if (hasBody(req)) throw refuse(params, rawUrl, new QuireError("200"));
    addQuery(params, rawUrl);
    return undefined;
  }
  const contentType = parseContentType(header);
  const expected = endpoint === "upload" ? "multipart/form-data" : "application/x-www-form-urlencoded";
  if (contentType.type !== expected || (endpoint === "upload" && !contentType.params.get("boundary"))) {
    throw refuse(params, rawUrl, new QuireError("200"));
  }
  try {
    assertUtf8Charset(contentType);
  } catch (err) {
    throw refuse(params, rawUrl, err as QuireError);
  }
  if (endpoint === "normal") {
    // Both places are read before either fails, so a `format` in the body counts even when the query is bad.
    const body = await readFormBody(req);
    let failure: unknown;
    for (const read of [() => addQuery(params, rawUrl), () => addFormEncoded(params, body)]) {
      try {
        read();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
    return undefined;
  }
  addQuery(params, rawUrl);
  let caller: Caller | undefined;
  return readUpload(req.raw, params, {
    maxBytes: opts.deps.config.maxUploadBytes,
    tempPath: opts.tempPath,
    // With key, signature and action before the file, a bad request is answered before one byte of it is read.
    beforeFile: async () => {
      if (params.has("apiKey") && params.has("signature") && params.has("action")) {
        // Only the fields sent before the file count here; busboy may add later ones while we wait.
        caller = await authenticate(params.snapshot(), endpoint, auth);
      }
    },
    // A file before the key and signature is spooled on the budget of unauthenticated bodies.
    spoolMeter: async () => {
      if (caller || !hold) return undefined;
      // The declared length is taken whole before the first byte, so that concurrent bodies never
      // share the budget out in pieces none can finish with: each fits whole or is refused unread.
      const declared = Number(req.headers["content-length"]);
      let taken = Number.isSafeInteger(declared) && declared > 0 ? Math.min(declared, opts.deps.config.maxUploadBytes) : 0;
      const refusal = taken > 0 ? hold.take(taken) : undefined;
      if (refusal) throw await refusalAt(refusal, params, opts);
      let written = 0;
      return (bytes) => {
        written += bytes;
        if (written <= taken) return undefined;
        const more = hold.take(written - taken);
        taken = written;
        return more ? refusalAt(more, params, opts) : undefined;
      };
    },
    onLimit: async () => {
      let who: Caller;
      try {
        who = caller ?? (await authenticate(params, endpoint, auth));
      } catch (err) {
        if (err instanceof QuireError) return err;
        throw err;
      }
      if (who.action === "document.update") return refusalAtUpdateLimit(params.get);
      return refusalAtLimit(params.get, opts.deps.store, who.accountId);
    },
  });
}

/**
 * The answer when an unauthenticated body reaches its bound. Reading stops there, so the fields
 * after the file are never seen: a key sent before the file and refused wins (decisions §2 step
 * 2); else 012 when the bounds are full for now (retrying later, or sending the key and
 * signature before the file, succeeds), or 205 on `file` when this file alone is beyond them.
 */
async function refusalAt(refusal: Refusal, params: RequestParams, opts: ApiRouteOptions): Promise<QuireError> {
  const apiKey = params.get("apiKey");
  if (apiKey !== undefined && !(await isKnownApiKey(apiKey, opts.deps.store.accounts))) return new QuireError("010");
  return refusal === "alone" ? new QuireError("205", "file") : new QuireError("012");
}
