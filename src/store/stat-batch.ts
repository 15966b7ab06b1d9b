import type { BeaconReport } from "../domain/statistics.ts";
import type { Visitor } from "../domain/reader-identity.ts";

/** Who an event is from: their keys under the day's salt, or the visitor those are made from when the batch is written. */
type Keyed = { readerKey: string; addressKey: string; visitor?: undefined };
type FromVisitor = { visitor: Visitor; readerKey?: undefined; addressKey?: undefined };

/**
 * One thing that happened on a public surface, as the web side buffers it (src/web/stats-counter.ts).
 * Readers are named by their keys under the day's salt (src/store/daily-salts.ts) only; the web
 * side gives the visitor, keyed when the batch is written (`keyed` in statistics.ts, off the event loop on SQLite), so
 * the hashes cost the reader's request nothing. A visitor is held in memory until then, never stored.
 */
export type StatEvent =
  | ({
      kind: "view";
      documentId: string;
      at: number;
      embedded: boolean;
      referrerHost: string;
      startPage: number;
    } & (Keyed | FromVisitor))
  | ({ kind: "download"; documentId: string; at: number } & (Keyed | FromVisitor))
  | ({ kind: "beacon"; documentId: string; at: number; report: BeaconReport } & ({ readerKey: string; visitor?: undefined } | FromVisitor))
  | { kind: "impressions"; documentId: string; at: number; count: number };

/** The visitor an event still carries, if it is not keyed yet. */
export function unkeyedVisitor(e: StatEvent): Visitor | undefined {
  return e.kind === "impressions" ? undefined : e.visitor;
}

/**
 * Counted events in columns: what the counter buffers (src/web/stats-counter.ts), what
 * `statistics.write` takes, and what crosses to SQLite's writer process. Numbers sit in typed
 * arrays and each document id, referring host, visitor string and key once, so the buffer holds
 * no object per event. Held as objects for the half second until their batch was written, a busy
 * reader page's events outlived the young generation and cost it in collections; packed into
 * columns at each tick, and posted, they cost it again (docs/statistics.md).
 */
export interface StatBatch {
  kinds: Uint8Array;
  /** Into `documents`. */
  documentOf: Uint32Array;
  documents: string[];
  at: Float64Array;
  /** Five numbers per event: a view's embedded, start page and host (into `hosts`); a beacon's report; impressions' count. */
  numbers: Float64Array;
  hosts: string[];
  /** Two per event, into `keys`: a keyed event's reader key and address key; -1 for none. */
  keyOf: Int32Array;
  keys: string[];
  /** Three per event, into `strings`: a visitor's address, its group and user agent; -1 for an event without a visitor. */
  visitors: Int32Array;
  strings: string[];
}

const KINDS = ["view", "download", "beacon", "impressions"] as const;
const WIDTH = 5;
/** What an event holds in the columns, in bytes: its numbers and indexes. */
const EVENT_BYTES = 1 + 4 + 8 + 8 * WIDTH + 4 * 2 + 4 * 3;
/** A string's cost beyond its characters (two bytes each at most): its header and its index entry. */
const STRING_BYTES = 64;

class Interned {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();
  private last: string | undefined;
  private lastIndex = -1;

  /**
   * The value's index, and the bytes it added (0 if it was there). The last value is checked
   * first: a popular page's views come from one document, an IPv4 visitor's group is its address,
   * and most views have no referrer.
   */
  of(value: string, added: { bytes: number }): number {
    if (value === this.last) return this.lastIndex;
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.list.push(value) - 1;
      this.index.set(value, i);
      added.bytes += STRING_BYTES + 2 * value.length;
    }
    this.last = value;
    this.lastIndex = i;
    return i;
  }
}

/** Grows a typed array's capacity by doubling. */
function grown<T extends Uint8Array | Uint32Array | Float64Array | Int32Array>(a: T, size: number, make: (n: number) => T): T {
  if (a.length >= size) return a;
  const b = make(Math.max(size, a.length * 2));
  b.set(a as never);
  return b;
}

/**
 * The last view a caller pushed for one user agent (the web side keeps one with each user agent's
 * bot check): which batch it went into, and its document, address and day. A view that matches it
 * is the same visitor's view of the same document that day, already in the batch, and `pushView`
 * leaves it out without touching the batch's maps: the reader page's common case (a reload, the
 * next page of a reader with no script) then costs a few comparisons.
 */
export interface LastView {
  batch: StatBatchBuilder | undefined;
  documentId: string;
  address: string;
  day: number;
}

export function lastView(): LastView {
  return { batch: undefined, documentId: "", address: "", day: -1 };
}

/** Fills a StatBatch one event at a time; `seal` hands it over at its length. */
export class StatBatchBuilder {
  private n = 0;
  private kinds = new Uint8Array(64);
  private documentOf = new Uint32Array(64);
  private at = new Float64Array(64);
  private numbers = new Float64Array(64 * WIDTH);
  private keyOf = new Int32Array(64 * 2);
  private visitors = new Int32Array(64 * 3);
  private readonly documents = new Interned();
  private readonly hosts = new Interned();
  private readonly keys = new Interned();
  private readonly strings = new Interned();
  private readonly added = { bytes: 0 };
  /** Events that still carry a visitor's address and user agent. */
  visitorCount = 0;
  /** Views left out: the same visitor's view of the same document earlier in this batch, that day (pushView). */
  repeatedViews = 0;
  /** The LastViews this batch's views were kept in, each once: cleared when it is sealed, so no address outlives its batch there. */
  private readonly lasts: LastView[] = [];
  /** By document index: each visitor's (address and user agent indexes) day of their view in this batch. */
  private readonly viewed = new Map<number, Map<number, number>>();

  get length(): number {
    return this.n;
  }

  /** About the memory the batch holds: its columns, and each string once. */
  get bytes(): number {
    return this.n * EVENT_BYTES + this.added.bytes;
  }

  push(e: StatEvent): void {
    const added = this.added;
    const i = this.begin(KINDS.indexOf(e.kind), this.documents.of(e.documentId, added), e.at);
    const o = i * WIDTH;
    const numbers = this.numbers;
    if (e.kind === "view") {
      this.viewNumbers(o, e.embedded, e.startPage, e.referrerHost);
    } else if (e.kind === "beacon") {
      const r = e.report;
      numbers[o] = r.page;
      numbers[o + 1] = r.seconds;
      numbers[o + 2] = r.turned ? 1 : 0;
      numbers[o + 3] = r.shares;
      numbers[o + 4] = r.clicks;
    } else {
      numbers.fill(0, o, o + WIDTH);
      if (e.kind === "impressions") numbers[o] = e.count;
    }
    const readerKey = e.kind === "impressions" ? undefined : e.readerKey;
    const addressKey = e.kind === "view" || e.kind === "download" ? e.addressKey : undefined;
    this.keyOf[i * 2] = readerKey === undefined ? -1 : this.keys.of(readerKey, added);
    this.keyOf[i * 2 + 1] = addressKey === undefined ? -1 : this.keys.of(addressKey, added);
    const visitor = unkeyedVisitor(e);
    if (visitor === undefined) this.visitors.fill(-1, i * 3, i * 3 + 3);
    else this.visitor(i, this.strings.of(visitor.address, added), this.strings.of(visitor.addressGroup, added), this.strings.of(visitor.userAgent, added));
  }

  /**
   * A reader page's view, as `push` would take it, from its parts: what the reader page counts on
   * every request, without an object for the event or its visitor.
   */
  pushView(last: LastView, documentId: string, at: number, address: string, addressGroup: string, userAgent: string, embedded: boolean, startPage: number, referrerHost: string): void {
    // A view counts once per reader, document and day (decisions §15): the same visitor's next
    // view of the document in this batch, on the same day, can add nothing, so it is not kept.
    // Reloads, and a flood cycling through user agents, then cost the writer one event a visitor.
    if (this.repeats(last, documentId, at, address)) return;
    const day = Math.floor(at / 86_400_000);
    // Listed once per batch: a user agent's next views (other documents, addresses) reuse it.
    if (last.batch !== this) this.lasts.push(last);
    last.batch = this;
    last.documentId = documentId;
    last.address = address;
    last.day = day;
    const doc = this.documents.of(documentId, this.added);
    // Interned in the order `push` takes them, so the batch is the one `push` would have made.
    const a = this.strings.of(address, this.added);
    const g = this.strings.of(addressGroup, this.added);
    const u = this.strings.of(userAgent, this.added);
    const visitor = a * 2 ** 26 + u;
    let seen = this.viewed.get(doc);
    if (!seen) {
      seen = new Map();
      this.viewed.set(doc, seen);
    }
    if (seen.get(visitor) === day) {
      this.repeatedViews++;
      return;
    }
    seen.set(visitor, day);
    const i = this.begin(0, doc, at);
    this.viewNumbers(i * WIDTH, embedded, startPage, referrerHost);
    this.keyOf[i * 2] = -1;
    this.keyOf[i * 2 + 1] = -1;
    this.visitor(i, a, g, u);
  }

  /**
   * Whether a view is `last` again: pushed into this batch for the same user agent (the caller's
   * `last` is kept per user agent), document, address and day. Counted as left out if so. A caller
   * that asks first need not work out the rest of the view's parts for a view that adds nothing.
   */
  repeats(last: LastView, documentId: string, at: number, address: string): boolean {
    if (last.batch !== this || last.address !== address || last.documentId !== documentId || last.day !== Math.floor(at / 86_400_000)) return false;
    this.repeatedViews++;
    return true;
  }

  /** A new row (`doc`: its document's index in `documents`): its index. */
  private begin(kind: number, doc: number, at: number): number {
    const i = this.n;
    if (i === this.kinds.length) this.grow(i + 1);
    this.n = i + 1;
    this.kinds[i] = kind;
    this.documentOf[i] = doc;
    this.at[i] = at;
    return i;
  }

  private viewNumbers(o: number, embedded: boolean, startPage: number, referrerHost: string): void {
    const numbers = this.numbers;
    numbers[o] = embedded ? 1 : 0;
    numbers[o + 1] = startPage;
    numbers[o + 2] = this.hosts.of(referrerHost, this.added);
    numbers[o + 3] = 0;
    numbers[o + 4] = 0;
  }

  /** The visitor of row `i`, by the indexes of its address, group and user agent in `strings`. */
  private visitor(i: number, address: number, group: number, userAgent: number): void {
    const v = i * 3;
    this.visitors[v] = address;
    this.visitors[v + 1] = group;
    this.visitors[v + 2] = userAgent;
    this.visitorCount++;
  }

  private grow(size: number): void {
    this.kinds = grown(this.kinds, size, (n) => new Uint8Array(n));
    this.documentOf = grown(this.documentOf, size, (n) => new Uint32Array(n));
    this.at = grown(this.at, size, (n) => new Float64Array(n));
    const cap = this.kinds.length;
    this.numbers = grown(this.numbers, cap * WIDTH, (n) => new Float64Array(n));
    this.keyOf = grown(this.keyOf, cap * 2, (n) => new Int32Array(n));
    this.visitors = grown(this.visitors, cap * 3, (n) => new Int32Array(n));
  }

  /** The batch at its length (its columns copied to fit: the builder may go on). */
  seal(): StatBatch {
    // A visitor's address waits in memory only until its batch is written (docs/statistics.md).
    for (const last of this.lasts) {
      if (last.batch !== this) continue;
      last.batch = undefined;
      last.address = "";
      last.documentId = "";
      last.day = -1;
    }
    this.lasts.length = 0;
    const n = this.n;
    return {
      kinds: this.kinds.slice(0, n), documentOf: this.documentOf.slice(0, n), documents: this.documents.list.slice(),
      at: this.at.slice(0, n), numbers: this.numbers.slice(0, n * WIDTH), hosts: this.hosts.list.slice(),
      keyOf: this.keyOf.slice(0, n * 2), keys: this.keys.list.slice(),
      visitors: this.visitors.slice(0, n * 3), strings: this.strings.list.slice(),
    };
  }
}

export function statBatchOf(events: readonly StatEvent[]): StatBatch {
  const b = new StatBatchBuilder();
  for (const e of events) b.push(e);
  return b.seal();
}

export function batchLength(b: StatBatch): number {
  return b.kinds.length;
}

/**
 * Keys for the visitor of event `i` (its address, group and user agent at `strings[address]`,
 * `strings[group]`, `strings[userAgent]`): the indexes let a caller remember a batch's keys by
 * number rather than by text.
 */
export type VisitorKeyer = (i: number, address: number, group: number, userAgent: number) => { readerKey: string; addressKey: string };

/**
 * The batch's events as objects (where they are written: SQLite's writer process, or PostgreSQL's pool);
 * given `keyer`, each visitor comes out replaced by their keys.
 */
export function statEventsOf(b: StatBatch, keyer?: VisitorKeyer): StatEvent[] {
  const out: StatEvent[] = [];
  const key = (i: number) => (i < 0 ? "" : b.keys[i]!);
  for (let i = 0; i < b.kinds.length; i++) {
    const o = i * WIDTH;
    const documentId = b.documents[b.documentOf[i]!]!;
    const at = b.at[i]!;
    const x = (k: number) => b.numbers[o + k]!;
    const v = b.visitors[i * 3]!;
    const kind = KINDS[b.kinds[i]!]!;
    if (kind === "impressions") {
      out.push({ kind, documentId, at, count: x(0) });
      continue;
    }
    let readerKey: string;
    let addressKey: string;
    if (v < 0) {
      readerKey = key(b.keyOf[i * 2]!);
      addressKey = key(b.keyOf[i * 2 + 1]!);
    } else if (keyer) {
      ({ readerKey, addressKey } = keyer(i, v, b.visitors[i * 3 + 1]!, b.visitors[i * 3 + 2]!));
    } else {
      const visitor = { address: b.strings[v]!, addressGroup: b.strings[b.visitors[i * 3 + 1]!]!, userAgent: b.strings[b.visitors[i * 3 + 2]!]! };
      if (kind === "view") out.push({ kind, documentId, visitor, at, embedded: x(0) === 1, startPage: x(1), referrerHost: b.hosts[x(2)]! });
      else if (kind === "download") out.push({ kind, documentId, visitor, at });
      else out.push({ kind, documentId, visitor, at, report: { page: x(0), seconds: x(1), turned: x(2) === 1, shares: x(3), clicks: x(4) } });
      continue;
    }
    if (kind === "view") out.push({ kind, documentId, readerKey, addressKey, at, embedded: x(0) === 1, startPage: x(1), referrerHost: b.hosts[x(2)]! });
    else if (kind === "download") out.push({ kind, documentId, readerKey, addressKey, at });
    else out.push({ kind, documentId, readerKey, at, report: { page: x(0), seconds: x(1), turned: x(2) === 1, shares: x(3), clicks: x(4) } });
  }
  return out;
}
