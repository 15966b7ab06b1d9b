/**
 * Readership statistics (decisions §15): what counts, and how much one reader can ever count for.
 * Pure rules; the request side (src/web/stats-routes.ts) turns requests into events, the store
 * (src/store/statistics.ts) applies these rules to what it has already counted of each reader today.
 */

/**
 * How often counted views are sent to be written. A killed process loses at most the last second
 * (decisions §15): events wait for the next tick (half a second at most), and the other half
 * second is the write's, which takes a few milliseconds for a second's events
 * (test/system/statistics-kill.test.ts kills a server under load and checks it).
 */
export const FLUSH_EVERY_MS = 500;

/** A view becomes a read once the reader turned a page or stayed this long (seconds). */
export const READ_AFTER_SECONDS = 10;
/** Seconds of reading one reader can add to a document in a day (a tab left open is not a day's reading). */
export const MAX_SECONDS_PER_READER_DAY = 4 * 3600;
/** Shares (link or embed code copied) counted per reader, document and day. */
export const MAX_SHARES_PER_READER_DAY = 3;
/** Links inside the document followed, counted per reader, document and day. */
export const MAX_CLICKS_PER_READER_DAY = 20;
/**
 * Readers counted from one address (IPv4, or IPv6 /64) for one document in a day: several people
 * behind one address are several readers, but a flood changing its user agent is not thousands.
 */
export const MAX_READERS_PER_ADDRESS_DAY = 8;
/** A beacon's time may run ahead of the server's clock since the view by this much (seconds). */
const CLOCK_SLACK_SECONDS = 5;
/** Longest host kept (DNS names are at most 253 characters). */
const MAX_HOST_LENGTH = 253;

/** What a reader's page reports in one beacon (already checked for shape by `parseBeacon`). */
export interface BeaconReport {
  /** The furthest page seen so far in this visit (1-based). */
  page: number;
  /** Seconds the page was visible since the previous beacon. */
  seconds: number;
  /** The reader turned a page in this visit. */
  turned: boolean;
  shares: number;
  clicks: number;
}

/** What the store keeps of one reader of one document on one day (stat_readers). */
export interface ReaderDay {
  firstAt: number;
  lastAt: number;
  viewed: boolean;
  read: boolean;
  downloaded: boolean;
  /** The furthest page reached; 0 before any view. */
  maxPage: number;
  seconds: number;
  shares: number;
  clicks: number;
}

/** What one event adds to the document's day: the store adds these up and writes them. */
export interface DayDelta {
  views: number;
  embeddedViews: number;
  reads: number;
  readSeconds: number;
  downloads: number;
  shares: number;
  clicks: number;
  /** The reader's furthest page moved from `from` to `to` (0: not counted before). */
  depth?: { from: number; to: number };
  /** A view's referrer, counted with it. */
  referrer?: { host: string; embedded: boolean };
}

export const emptyReaderDay = (now: number): ReaderDay => ({
  firstAt: now, lastAt: now, viewed: false, read: false, downloaded: false, maxPage: 0, seconds: 0, shares: 0, clicks: 0,
});

const zeroDelta = (): DayDelta => ({ views: 0, embeddedViews: 0, reads: 0, readSeconds: 0, downloads: 0, shares: 0, clicks: 0 });

const clampInt = (n: number, min: number, max: number) => Math.min(max, Math.max(min, Math.floor(n)));

/**
 * A view of the reader or the embed. Counted once per reader and day: a reload, a second tab or
 * the embed after the page adds nothing. `startPage` is the page it opened at (within the document).
 */
export function applyView(r: ReaderDay, v: { embedded: boolean; referrerHost: string; startPage: number; pageCount: number }): DayDelta {
  const d = zeroDelta();
  if (r.viewed) return d;
  r.viewed = true;
  d.views = 1;
  if (v.embedded) d.embeddedViews = 1;
  d.referrer = { host: v.referrerHost, embedded: v.embedded };
  const page = clampInt(v.startPage, 1, Math.max(1, v.pageCount));
  d.depth = { from: r.maxPage, to: Math.max(r.maxPage, page) };
  r.maxPage = d.depth.to;
  return d;
}

/** A download of the original, once per reader and day (a view is not needed: links go straight to it). */
export function applyDownload(r: ReaderDay): DayDelta {
  const d = zeroDelta();
  if (r.downloaded) return d;
  r.downloaded = true;
  d.downloads = 1;
  return d;
}

/**
 * A beacon from the reader's page. It counts only on top of a view counted for the same reader
 * that day (a forged beacon for a page its sender never opened counts for nothing), its page
 * within the document, its seconds within the time since the view (so "stayed 10 s" cannot be
 * claimed sooner) and the day's cap; it makes the view a read when a page was turned or the
 * reader's seconds reach READ_AFTER_SECONDS.
 */
export function applyBeacon(r: ReaderDay, b: BeaconReport, now: number, pageCount: number): DayDelta {
  const d = zeroDelta();
  if (!r.viewed) return d;
  const page = clampInt(b.page, 1, Math.max(1, pageCount));
  if (page > r.maxPage) {
    d.depth = { from: r.maxPage, to: page };
    r.maxPage = page;
  }
  const elapsed = Math.max(0, Math.floor((now - r.firstAt) / 1000)) + CLOCK_SLACK_SECONDS;
  const allowed = Math.min(MAX_SECONDS_PER_READER_DAY, elapsed);
  const seconds = clampInt(Math.min(r.seconds + clampInt(b.seconds, 0, MAX_SECONDS_PER_READER_DAY), allowed), r.seconds, MAX_SECONDS_PER_READER_DAY);
  const added = seconds - r.seconds;
  r.seconds = seconds;
  if (!r.read && (b.turned || r.seconds >= READ_AFTER_SECONDS)) {
    r.read = true;
    d.reads = 1;
    // Time spent is averaged over reads: a read brings all its seconds so far.
    d.readSeconds = r.seconds;
  } else if (r.read) d.readSeconds = added;
  const shares = Math.min(MAX_SHARES_PER_READER_DAY, r.shares + clampInt(b.shares, 0, MAX_SHARES_PER_READER_DAY));
  d.shares = shares - r.shares;
  r.shares = shares;
  const clicks = Math.min(MAX_CLICKS_PER_READER_DAY, r.clicks + clampInt(b.clicks, 0, MAX_CLICKS_PER_READER_DAY));
  d.clicks = clicks - r.clicks;
  r.clicks = clicks;
  r.lastAt = Math.max(r.lastAt, now);
  return d;
}

/** Largest beacon body read (bytes): a few numbers. */
export const MAX_BEACON_BYTES = 1024;

/**
 * A beacon's body, `{"p":page,"s":seconds,"t":turned,"sh":shares,"c":clicks}` as the reader's
 * script sends it (text/plain, so sendBeacon needs no preflight); undefined for anything else.
 * Absurd numbers are kept here and bounded by `applyBeacon` against what the store knows.
 */
export function parseBeacon(body: string): BeaconReport | undefined {
  if (body.length > MAX_BEACON_BYTES) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  if (typeof o.p !== "number" || !Number.isFinite(o.p)) return undefined;
  return { page: num(o.p), seconds: num(o.s), turned: o.t === true, shares: num(o.sh), clicks: num(o.c) };
}

/**
 * The referring site of a request: the host of its Referer when that is an http(s) address, ""
 * otherwise. Never the path or query: those may name a person's private page.
 */
export function referrerHost(referer: string | undefined): string {
  if (!referer) return "";
  try {
    const url = new URL(referer);
    if (url.protocol !== "http:" && url.protocol !== "https:") return "";
    return url.hostname.toLowerCase().slice(0, MAX_HOST_LENGTH);
  } catch {
    return "";
  }
}

/** A range of UTC days, both ends included, as `YYYY-MM-DD`. */
export interface DayRange {
  from: string;
  to: string;
}

export const STATS_DATE_RANGES = ["thisMonth", "lastMonth", "maxTime"] as const;
export type StatsDateRange = (typeof STATS_DATE_RANGES)[number];

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** Where `maxTime` starts: before anything can have been counted. */
export const ALL_TIME_FROM = "2000-01-01";

/** The days of a named range at `now` (UTC); maxTime starts at the first day anything can have been counted. */
export function namedRange(range: StatsDateRange, now: number): DayRange {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (range === "thisMonth") return { from: isoDay(new Date(Date.UTC(y, m, 1))), to: isoDay(d) };
  if (range === "lastMonth") return { from: isoDay(new Date(Date.UTC(y, m - 1, 1))), to: isoDay(new Date(Date.UTC(y, m, 0))) };
  return { from: ALL_TIME_FROM, to: isoDay(d) };
}

/** The `days` days up to and including `now`'s (the app's default view: the last 30 days). */
export function lastDays(days: number, now: number): DayRange {
  return { from: isoDay(new Date(now - (days - 1) * 86_400_000)), to: isoDay(new Date(now)) };
}

/** A `YYYY-MM-DD` that is a real calendar day, or undefined. */
export function calendarDay(s: string): string | undefined {
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(s)) return undefined;
  const t = Date.parse(`${s}T00:00:00Z`);
  return Number.isFinite(t) && isoDay(new Date(t)) === s ? s : undefined;
}

/** Every day of a range, in order (for a chart's axis); at most `max` days, the latest kept. */
export function daysOf(range: DayRange, max = 3660): string[] {
  const out: string[] = [];
  const end = Date.parse(`${range.to}T00:00:00Z`);
  let t = Math.max(Date.parse(`${range.from}T00:00:00Z`), end - (max - 1) * 86_400_000);
  for (; t <= end; t += 86_400_000) out.push(isoDay(new Date(t)));
  return out;
}
