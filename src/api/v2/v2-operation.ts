import type { FastifyBaseLogger, FastifySchema } from "fastify";
import type { ApiDeps } from "../actions/action.ts";
import type { RateLimiter } from "../rate-limit.ts";
import type { IncomingMessage } from "node:http";

/** The caller a valid bearer token names (decisions §14). */
export interface V2Caller {
  accountId: number;
  username: string;
  /** SHA-256 of the token used: `DELETE /v2/oauth/access` revokes it. */
  tokenHash: string;
  /** The account's `documentsVersion` when the token was read (what cached answers are kept under). */
  documentsVersion: number;
}

export interface V2Deps extends ApiDeps {
  /** Where uploads are spooled (the API's spool). */
  tempPath(): Promise<string>;
  /** v1's request rate (QUIRE_RATE_BURST, QUIRE_RATE_PER_SECOND), per token here; unset: no limit. */
  rateLimiter?: Pick<RateLimiter, "takeWithStatus">;
}

export interface V2Context {
  caller: V2Caller;
  deps: V2Deps;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  /** The absolute origin links are written with: QUIRE_PUBLIC_URL, else the request's own. */
  origin: string;
  raw: IncomingMessage;
  log: FastifyBaseLogger;
  now: number;
  requestId: string;
}

/**
 * What an operation answers: a JSON value (200, `application/json`), or raw bytes with a type.
 * Failures are thrown as V2Error.
 */
export type V2Answer = { json: unknown } | { bytes: Buffer | string; type: string };

/** One v2 operation (research §2): its route, the schema of its request, and what it does. */
export interface V2Operation {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  url: string;
  schema: FastifySchema;
  /**
   * Its answer is computed from the caller's documents and their v2 rows alone (both move the
   * account's `documentsVersion`), so it may be kept under that version, as v1's `documents.list` is.
   */
  cacheable?: boolean;
  /** Needs no token (the QR code image, whose address is signed). */
  public?: boolean;
  /** Read its body itself (multipart): JSON parsing and body validation are skipped. */
  rawBody?: boolean;
  handler(ctx: V2Context): Promise<V2Answer>;
}

/** A failure answered as `{message, ...extra}` with an HTTP status (research §4.2). */
export class V2Error extends Error {
  readonly status: number;
  readonly extra: Record<string, unknown>;
  constructor(status: number, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.extra = extra;
  }
}

export const notFound = (): V2Error => new V2Error(404, "Not Found");
export const json = (value: unknown): V2Answer => ({ json: value });
