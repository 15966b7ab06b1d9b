import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Every request's id: a proxy's or client's `X-Request-Id` when it is a plain token (so one id
 * follows a request through the proxy's logs and ours), otherwise a fresh UUID; unique across
 * processes, unlike Fastify's per-process counter.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && CLIENT_ID.test(given) ? given : randomUUID();
}
