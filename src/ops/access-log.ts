import { LogController, type FastifyReply, type FastifyRequest } from "fastify";
import type { DestinationStream } from "pino";
import { outcomeOf } from "./request-outcome.ts";

/**
 * The HTTP logger as `quire serve` runs it. Query strings carry apiKey and signature: only the
 * path is ever logged. `stream` replaces stdout (the benchmark writes to /dev/null).
 */
export function httpLoggerOptions(level: string, stream?: DestinationStream) {
  return {
    level,
    serializers: { req: (r: { method: string; url: string; id: string }) => ({ method: r.method, url: r.url.split("?")[0], reqId: r.id }) },
    ...(stream ? { stream } : {}),
  };
}

/**
 * One line per request, once it is answered. Fastify's own pair of lines ("incoming request",
 * "request completed") cost twice as much on the busiest path and still lacked the API action
 * and error code, which are what an operator looks for.
 */
export class AccessLog extends LogController {
  override incomingRequest(): void {}

  /** Fastify's own line names the raw URL, query (key, signature) included; "answered" says 404. */
  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url;
    const api = route !== undefined && route.endsWith("/1_0") ? outcomeOf(request) : undefined;
    const line = {
      method: request.method,
      path: request.url.split("?")[0],
      status: reply.statusCode,
      ...(api ? { action: api.action, code: api.code } : {}),
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: error }, "request errored");
    else reply.log.info(line, "answered");
  }
}
