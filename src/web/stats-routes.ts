import { createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { isbot } from "isbot";
import type { Config } from "../config.ts";
import type { DocumentRecord } from "../domain/document.ts";
import { isPlainIPv4, newVisitor, visitorUserAgent, type Visitor } from "../domain/reader-identity.ts";
import { MAX_BEACON_BYTES, parseBeacon, referrerHost, type BeaconReport } from "../domain/statistics.ts";
import { addressGroup } from "../ops/client-address.ts";
import { lastView, type LastView } from "../store/stat-batch.ts";
import type { Store } from "../store/open-store.ts";
import { StatsCounter } from "./stats-counter.ts";

/**
 * The cookie the app sets on a signed-in publisher's browser (src/web/app/statistics-page.ts), so
 * that their own views of their documents are not counted. Public pages read it, never set it.
 */
export const PUBLISHER_COOKIE = "quire_publisher";

/** Impressions counted per address (IPv4, IPv6 /64) and minute: a script reloading a profile is not an audience. */
const IMPRESSIONS_PER_ADDRESS_MINUTE = 300;
/** Addresses remembered for that bound at most (the map is cleared past it). */
const MAX_TRACKED_ADDRESSES = 50_000;
/** How long a beacon's document lookup is kept (beacons come in bursts from many readers of one document). */
const DOC_CACHE_MS = 2000;
const DOC_CACHE_MAX = 10_000;

/** The value of PUBLISHER_COOKIE for an account: its id and a MAC under the app's cookie secret. */
export function publisherCookieValue(secret: string, accountId: number): string {
  return `${accountId}.${createHmac("sha256", secret).update(`publisher:${accountId}`).digest("base64url")}`;
}

const PUBLISHER_COOKIE_RE = new RegExp(`(?:^|;\\s*)${PUBLISHER_COOKIE}=([0-9]{1,12})\\.([A-Za-z0-9_-]{43})(?:;|$)`);

/** The account a request's PUBLISHER_COOKIE proves, if any. */
function publisherOf(secret: string, cookieHeader: string | undefined): number | undefined {
  if (!cookieHeader) return undefined;
  const m = PUBLISHER_COOKIE_RE.exec(cookieHeader);
  if (!m) return undefined;
  const expected = Buffer.from(publisherCookieValue(secret, Number(m[1])));
  const given = Buffer.from(`${m[1]}.${m[2]}`);
  return expected.length === given.length && timingSafeEqual(expected, given) ? Number(m[1]) : undefined;
}

/** What the public routes call to count (every call returns at once; nothing is awaited by a page). */
export interface PublicCounting {
  /** A reader or embed page of an active document was served. */
  view(req: FastifyRequest, doc: DocumentRecord, opts: { embedded: boolean; startPage: number }): void;
  download(req: FastifyRequest, doc: DocumentRecord): void;
  /** Documents' cards were shown (profile, search results). */
  impressions(req: FastifyRequest, docs: readonly Pick<DocumentRecord, "documentId" | "accountId">[]): void;
}

export interface StatsRouteDeps {
  config: Readonly<Config>;
  store: Store;
  findDoc(p: { username: string; name: string }): Promise<DocumentRecord | undefined>;
}

/**
 * isbot's answers by user agent: its pattern is long, and the same few browsers' user agents come
 * again and again. Bounded by their total length: past it, the map starts again (a flood of
 * made-up user agents costs their own checks, and the common ones' once more each). A plain map, not an LRU: a hit is looked up
 * on every reader page, and an LRU's reordering (a delete and a set) made it a third dearer.
 * Each answer keeps the user agent's text as first met: a counted visit carries that text into
 * the buffer, so each request's own copy dies with the request, where the buffer kept it for its
 * half second, long enough to be moved to the old generation and collected there. It also keeps
 * the last view counted with that user agent (`LastView`), so that the same reader's next view
 * of the document in the same batch is left out at once (a reload costs a few comparisons).
 */
interface UserAgentAnswer {
  bot: boolean;
  text: string;
  last: LastView;
}

const BOT_ANSWERS = new Map<string, UserAgentAnswer>();
const BOT_ANSWERS_MAX_CHARS = 256 * 1024;
const BOT_UA_MAX = 1024;
let botAnswersChars = 0;

function botAnswer(ua: string): UserAgentAnswer {
  let answer = BOT_ANSWERS.get(ua);
  if (answer === undefined) {
    answer = { bot: isbot(ua), text: ua, last: lastView() };
    if (ua.length <= BOT_UA_MAX) {
      if (botAnswersChars + ua.length > BOT_ANSWERS_MAX_CHARS) {
        BOT_ANSWERS.clear();
        botAnswersChars = 0;
      }
      BOT_ANSWERS.set(ua, answer);
      botAnswersChars += ua.length;
    }
  }
  return answer;
}

const PREFETCH = /prefetch|prerender|preview/i;

/** What counting reads of a request that counts. */
interface Visit {
  ip: string;
  /** The text the bot check keeps for it (`botAnswer`). */
  userAgent: string;
  cookie: string | undefined;
}

const prefetching = (header: string | string[] | undefined) => header !== undefined && PREFETCH.test(String(header));

/**
 * The user agent's kept answer for a request that may count, read on every reader page's request
 * (nothing made for it); undefined for one that must not: counting off, a known bot or link
 * preview (isbot's list, kept by its maintainers), a prefetch or prerender, no user agent at all.
 * Whether it is the document's own publisher is the caller's to ask (`isPublisher`).
 */
function countedAgent(req: FastifyRequest, enabled: boolean): UserAgentAnswer | undefined {
  if (!enabled || req.method !== "GET" && req.method !== "POST") return undefined;
  const h = req.headers;
  const ua = h["user-agent"];
  if (!ua) return undefined;
  const answer = botAnswer(ua);
  if (answer.bot) return undefined;
  if (prefetching(h["sec-purpose"]) || prefetching(h.purpose) || prefetching(h["x-purpose"]) || prefetching(h["x-moz"])) return undefined;
  return answer;
}

/** The visit of a request that may count (`countedAgent`), as the events other than a view keep it. */
function countedVisit(req: FastifyRequest, enabled: boolean): Visit | undefined {
  const answer = countedAgent(req, enabled);
  return answer && { ip: req.ip, userAgent: answer.text, cookie: req.headers.cookie };
}

/** The address group a visitor is bounded by: an IPv4 address itself, an IPv6 address's /64. */
const groupOf = (ip: string) => (isPlainIPv4(ip) ? ip : addressGroup(ip));

/** The visitor of a counted request: hashed into keys when its batch is written, never stored. */
function visitorOf(v: Visit): Visitor {
  return newVisitor(v.ip, groupOf(v.ip), v.userAgent);
}

/** Reads a small body (the beacon) from the raw request; undefined when it is larger than `max` bytes. */
async function smallBody(req: FastifyRequest, max: number): Promise<string | undefined> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > max) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.raw as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Readership counting on the public pages (decisions §15): the beacon route, and what the reader,
 * download, profile and search routes call. Registered with one line by web-routes.ts; its buffer
 * is written every half second and on the server's close.
 */
export function registerStatistics(web: FastifyInstance, deps: StatsRouteDeps): PublicCounting {
  const { store } = deps;
  const enabled = deps.config.statistics;
  const counter = new StatsCounter(store, web.log, Date.now, deps.config.statsFlushMs);
  if (enabled) counter.start();
  // A close writes what is buffered, so nothing counted is lost on a normal stop.
  web.addHook("onClose", async () => {
    await counter.stop();
  });
  const fail = (err: unknown) => web.log.warn({ err }, "statistics: an event could not be counted");

  let cookieSecret: string | undefined;
  const secretReady = store.appSessions.cookieSecret().then((s) => (cookieSecret = s)).catch(() => undefined);
  const isPublisher = (cookie: string | undefined, accountId: number) =>
    cookieSecret !== undefined && publisherOf(cookieSecret, cookie) === accountId;

  const impressionsSeen = new Map<string, { minute: number; count: number }>();
  const impressionsAllowed = (v: Visit, n: number, now: number): number => {
    const group = addressGroup(v.ip);
    const minute = Math.floor(now / 60_000);
    let seen = impressionsSeen.get(group);
    if (!seen || seen.minute !== minute) {
      if (impressionsSeen.size >= MAX_TRACKED_ADDRESSES) impressionsSeen.clear();
      seen = { minute, count: 0 };
      impressionsSeen.set(group, seen);
    }
    const allowed = Math.max(0, Math.min(n, IMPRESSIONS_PER_ADDRESS_MINUTE - seen.count));
    seen.count += allowed;
    return allowed;
  };

  const docCache = new Map<string, { at: number; doc: Promise<DocumentRecord | undefined> }>();
  const cachedDoc = (p: { username: string; name: string }, now: number) => {
    const key = `${p.username}/${p.name}`;
    const hit = docCache.get(key);
    if (hit && now - hit.at < DOC_CACHE_MS) return hit.doc;
    if (docCache.size >= DOC_CACHE_MAX) docCache.clear();
    const doc = deps.findDoc(p);
    docCache.set(key, { at: now, doc });
    doc.catch(() => docCache.delete(key));
    return doc;
  };

  // The reader's beacons: answered at once, whatever they hold; counted (or not) when written.
  web.post<{ Params: { username: string; name: string } }>("/:username/docs/:name/beacon", async (req, reply) => {
    const body = await smallBody(req, MAX_BEACON_BYTES).catch(() => undefined);
    void reply.code(204).header("cache-control", "no-store").send();
    const visit = body === undefined ? undefined : countedVisit(req, enabled);
    if (body === undefined || !visit) return reply;
    const report: BeaconReport | undefined = parseBeacon(body);
    if (!report) return reply;
    const now = Date.now();
    const doc = await cachedDoc(req.params, now).catch(() => undefined);
    if (!doc || doc.state !== "A" || doc.name !== req.params.name) return reply;
    await secretReady;
    if (isPublisher(visit.cookie, doc.accountId)) return reply;
    counter.push({ kind: "beacon", documentId: doc.documentId, visitor: visitorOf(visit), at: now, report });
    return reply;
  });

  /**
   * A reader page's view: left out at once if it repeats its user agent's last (`LastView`), else
   * its parts written into the buffer's columns.
   */
  const countView = (req: FastifyRequest, doc: DocumentRecord, opts: { embedded: boolean; startPage: number }, agent: UserAgentAnswer, at: number, ip: string) => {
    if (isPublisher(req.headers.cookie, doc.accountId) || counter.repeatsView(agent.last, doc.documentId, at, ip)) return;
    counter.pushView(agent.last, doc.documentId, at, ip, groupOf(ip), visitorUserAgent(agent.text), opts.embedded, opts.startPage, referrerHost(req.headers.referer));
  };

  /**
   * A download: the bot check (its answers kept by user agent) and the visitor written
   * into the buffer's columns, a few microseconds; the keys are made when the batch is written
   * (src/store/statistics.ts). A process's first requests, before the app's secret is read, wait for it.
   */
  const countReader = (req: FastifyRequest, doc: DocumentRecord, count: (v: Visit, now: number) => void) => {
    const visit = countedVisit(req, enabled);
    if (!visit) return;
    const now = Date.now();
    if (cookieSecret !== undefined) {
      if (!isPublisher(visit.cookie, doc.accountId)) count(visit, now);
      return;
    }
    void secretReady.then(() => {
      if (!isPublisher(visit.cookie, doc.accountId)) count(visit, now);
    }).catch(fail);
  };

  return {
    view(req, doc, opts) {
      const agent = countedAgent(req, enabled);
      if (!agent) return;
      const at = Date.now();
      const ip = req.ip;
      // Every view after a process's first few, whose secret is read by then: at once, nothing made.
      if (cookieSecret !== undefined) countView(req, doc, opts, agent, at, ip);
      else void secretReady.then(() => countView(req, doc, opts, agent, at, ip)).catch(fail);
    },
    download(req, doc) {
      countReader(req, doc, (v, at) => counter.push({ kind: "download", documentId: doc.documentId, visitor: visitorOf(v), at }));
    },
    impressions(req, docs) {
      if (docs.length === 0) return;
      const visit = countedVisit(req, enabled);
      if (!visit) return;
      const now = Date.now();
      const allowed = impressionsAllowed(visit, docs.length, now);
      void secretReady.then(() => {
        for (const d of docs.slice(0, allowed)) {
          if (!isPublisher(visit.cookie, d.accountId)) counter.push({ kind: "impressions", documentId: d.documentId, at: now, count: 1 });
        }
      });
    },
  };
}
