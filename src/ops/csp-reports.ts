import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Counter, type Registry } from "prom-client";
import { addressGroup } from "./client-address.ts";
import { LeakyBuckets } from "./leaky-buckets.ts";

/** A report is a few hundred bytes; nothing larger is read. */
const MAX_BODY_BYTES = 16 * 1024;
/** Reports taken per address (an IPv6 /64) and from everyone together, per minute; the rest are counted and dropped. */
const PER_ADDRESS_PER_MINUTE = 30;
const TOTAL_PER_MINUTE = 600;
/** Each logged field is cut to this many characters. */
const FIELD_CHARS = 300;
/** Directives counted by name; any other is counted as "other" (a label must not take arbitrary values). */
const DIRECTIVES = new Set([
  "script-src", "script-src-elem", "script-src-attr", "style-src", "style-src-elem", "style-src-attr", "img-src", "connect-src",
  "media-src", "object-src", "frame-src", "frame-ancestors", "base-uri", "form-action", "default-src",
]);
const TYPES = ["application/csp-report", "application/reports+json", "application/json"];

export interface CspViolation {
  directive: string;
  blocked: string;
  /** The page's path only: a reader's query (`?q=`) is theirs, not the log's. */
  page: string;
  source: string;
  line: number | undefined;
}

const text = (v: unknown) => (typeof v === "string" ? v.slice(0, FIELD_CHARS) : "");
const pathOf = (v: unknown) => {
  try {
    return new URL(text(v)).pathname;
  } catch {
    return "";
  }
};

/** The violations in a body of either format: `report-uri`'s `{"csp-report": …}` or the Reporting API's array. */
export function violationsOf(body: unknown): CspViolation[] {
  const one = (r: Record<string, unknown>, camel: boolean): CspViolation => ({
    directive: text(camel ? r.effectiveDirective : (r["effective-directive"] ?? r["violated-directive"])).split(" ")[0]!,
    blocked: text(camel ? r.blockedURL : r["blocked-uri"]),
    page: pathOf(camel ? r.documentURL : r["document-uri"]),
    source: text(camel ? r.sourceFile : r["source-file"]),
    line: Number.isInteger(camel ? r.lineNumber : r["line-number"]) ? Number(camel ? r.lineNumber : r["line-number"]) : undefined,
  });
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
  const own = (o: Record<string, unknown>, k: string) => (Object.hasOwn(o, k) ? o[k] : undefined);
  const found: CspViolation[] = [];
  const report = isObject(body) ? own(body, "csp-report") : undefined;
  if (isObject(report)) found.push(one(report, false));
  if (Array.isArray(body)) {
    for (const r of body.slice(0, 20)) {
      const inner = isObject(r) && own(r, "type") === "csp-violation" ? own(r, "body") : undefined;
      if (isObject(inner)) found.push(one(inner, true));
    }
  }
  // A report that names no directive tells nothing.
  return found.filter((v) => v.directive !== "");
}

/** The body, or undefined when it is larger than the bound (the connection then stops being read). */
function readBounded(req: FastifyRequest): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > MAX_BODY_BYTES) return resolve(undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    const raw = req.raw;
    raw.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        raw.removeAllListeners("data");
        raw.pause();
        resolve(undefined);
      } else chunks.push(c);
    });
    raw.on("end", () => resolve(Buffer.concat(chunks)));
    raw.on("error", reject);
  });
}

/**
 * Where browsers report what a page's Content-Security-Policy blocked (web-headers.ts): each
 * violation logged (directive, blocked address, page path, source line) and counted in
 * `quire_csp_reports_total`, so an injection attempt, or a page of ours that broke its own policy,
 * is seen. Bounded: 16 KiB a body, 30 reports a minute per address and 600 from everyone; past the
 * rate they are only counted as dropped.
 */
export function registerCspReports(app: FastifyInstance, opts: { path: string; registry?: Registry; clock?: () => number }): void {
  const clock = opts.clock ?? Date.now;
  const counter = new Counter({
    name: "quire_csp_reports_total",
    help: "Content-Security-Policy violation reports by outcome (logged, dropped over the rate, refused) and directive",
    labelNames: ["outcome", "directive"],
    registers: opts.registry ? [opts.registry] : [],
  });
  const perAddress = new LeakyBuckets(PER_ADDRESS_PER_MINUTE, 60_000);
  const total = new LeakyBuckets(TOTAL_PER_MINUTE, 60_000, 1);
  const answer = (reply: FastifyReply, status: number) => reply.code(status).header("cache-control", "no-store").send();

  app.post(opts.path, async (req, reply) => {
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (!TYPES.includes(type)) {
      counter.inc({ outcome: "refused", directive: "none" });
      return answer(reply, 415);
    }
    const now = clock();
    if (perAddress.full(addressGroup(req.ip), now) || total.full("all", now)) {
      counter.inc({ outcome: "dropped", directive: "none" });
      return answer(reply.header("connection", "close"), 429);
    }
    perAddress.pour(addressGroup(req.ip), now);
    total.pour("all", now);
    const body = await readBounded(req);
    if (body === undefined) {
      counter.inc({ outcome: "refused", directive: "none" });
      return answer(reply.header("connection", "close"), 413);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      parsed = undefined;
    }
    const violations = violationsOf(parsed);
    if (violations.length === 0) {
      counter.inc({ outcome: "refused", directive: "none" });
      return answer(reply, 400);
    }
    for (const v of violations) {
      counter.inc({ outcome: "logged", directive: DIRECTIVES.has(v.directive) ? v.directive : "other" });
      req.log.warn({ csp: v }, "content security policy violation");
    }
    return answer(reply, 204);
  });
}
