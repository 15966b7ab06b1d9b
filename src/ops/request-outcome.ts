import type { FastifyInstance, FastifyRequest } from "fastify";

/**
 * What the API answered, for the requests metric and the access log: the route notes the action
 * once it is known and the error code when it refuses; both are read once the answer is sent.
 * Kept in two request fields declared up front (Fastify decorations), which costs a store per
 * request where a WeakMap entry cost an allocation and a hash-table insert.
 */
declare module "fastify" {
  interface FastifyRequest {
    apiAction: string | null;
    apiErrorCode: string | null;
  }
}

export function registerRequestOutcome(app: FastifyInstance): void {
  app.decorateRequest("apiAction", null);
  app.decorateRequest("apiErrorCode", null);
}

export function noteAction(req: FastifyRequest, action: string): void {
  req.apiAction = action;
}

export function noteErrorCode(req: FastifyRequest, code: string): void {
  req.apiErrorCode = code;
}

/** Action "none" when the request never named a served action; code "ok" unless an error was noted. */
export function outcomeOf(req: FastifyRequest): { action: string; code: string } {
  return { action: req.apiAction ?? "none", code: req.apiErrorCode ?? "ok" };
}
