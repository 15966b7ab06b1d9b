/**
 * What the API answered, for the requests metric: the route notes the action once it is known and
 * the error code when it refuses; the app's onResponse hook reads both. Keyed by the raw request,
 * so nothing is added to Fastify's request type.
 */
const outcomes = new WeakMap<object, { action?: string; code?: string }>();

function outcomeRecord(req: { raw: object }): { action?: string; code?: string } {
  let o = outcomes.get(req.raw);
  if (!o) outcomes.set(req.raw, (o = {}));
  return o;
}

export function noteAction(req: { raw: object }, action: string): void {
  outcomeRecord(req).action = action;
}

export function noteErrorCode(req: { raw: object }, code: string): void {
  outcomeRecord(req).code = code;
}

/** Action "none" when the request never named a served action; code "ok" unless an error was noted. */
export function outcomeOf(req: { raw: object }): { action: string; code: string } {
  const o = outcomes.get(req.raw);
  return { action: o?.action ?? "none", code: o?.code ?? "ok" };
}
