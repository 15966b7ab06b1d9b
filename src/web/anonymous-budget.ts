import type { FastifyReply, FastifyRequest } from "fastify";
import { createRateLimiter } from "../ops/leaky-buckets.ts";
import { addressGroup } from "../ops/client-address.ts";
import { html } from "./html.ts";
import { pageLayout } from "./page-layout.ts";
import type { WebAssets } from "./web-assets.ts";
import { setPageHeaders } from "./web-headers.ts";

/**
 * What one client address (an IPv6 /64) may make the public pages compute: every costly
 * anonymous request takes one from a leaky bucket of QUIRE_ANONYMOUS_BURST that drains at
 * QUIRE_ANONYMOUS_PER_SECOND (the API's rate limit, one mechanism: leaky-bucket.ts). Costly means
 * a search (`/search`, `/<username>?q=`, a reader's `?q=`, `search.json`), a reader page or page
 * text the cache does not hold yet (what it builds), the whole `text.json`, and `/oembed`; a
 * page already built costs nothing and is never refused. Past the budget: 429 with Retry-After.
 */
export interface AnonymousBudget {
  /** Undefined when the request may go on (it is counted), else the seconds the address must wait. */
  take(req: FastifyRequest): number | undefined;
}

export function anonymousBudget(opts: { burst: number; perSecond: number; clock?: () => number }): AnonymousBudget {
  const limiter = createRateLimiter(opts);
  return {
    take(req) {
      const waitMs = limiter.take(addressGroup(req.ip));
      return waitMs === 0 ? undefined : Math.max(1, Math.ceil(waitMs / 1000));
    },
  };
}

/** How a refused request is answered: a page for pages, JSON for what scripts fetch, text for oEmbed (as its other errors). */
export type RefusalForm = { kind: "html"; assets: WebAssets; frameable: boolean } | { kind: "json" } | { kind: "text" };

const MESSAGE = "Too many requests from your address";

export function tooManyRequests(reply: FastifyReply, retryAfterSeconds: number, form: RefusalForm): FastifyReply {
  reply.code(429).header("retry-after", String(retryAfterSeconds)).header("cache-control", "no-store").header("x-content-type-options", "nosniff");
  const wait = `${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}`;
  if (form.kind === "json") return reply.type("application/json; charset=utf-8").send(JSON.stringify({ error: MESSAGE, retryAfter: retryAfterSeconds }));
  if (form.kind === "text") return reply.type("text/plain; charset=utf-8").send(`${MESSAGE}: try again in ${wait}.\n`);
  setPageHeaders(reply, { frameable: form.frameable, noindex: true });
  const body = pageLayout(
    { title: "Too many requests", noindex: true },
    form.assets,
    html`<main class="state-page"><h1>Too many requests</h1><p>This address has asked for many searches and pages in a short time. Please try again in ${wait}.</p></main>`,
  );
  return reply.type("text/html; charset=utf-8").send(body.value);
}

/** The same for a search refused because every search place is taken and the queue is full (503: the server's state, not the client's share). */
export function searchBusy(reply: FastifyReply, assets: WebAssets): FastifyReply {
  reply.code(503).header("retry-after", "2").header("cache-control", "no-store");
  setPageHeaders(reply, { frameable: false, noindex: true });
  const body = pageLayout(
    { title: "Search is busy", noindex: true },
    assets,
    html`<main class="state-page"><h1>Search is busy</h1><p>Too many searches are running right now. Please try again in a few seconds.</p></main>`,
  );
  return reply.type("text/html; charset=utf-8").send(body.value);
}
