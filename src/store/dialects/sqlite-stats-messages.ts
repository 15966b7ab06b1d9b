import { unkeyedVisitor, type StatEvent } from "../statistics.ts";

/**
 * A batch of events as it crosses to the writer thread: in columns, numbers in typed arrays (moved,
 * not copied) and each document id, referring host, address and user agent once. Posted as
 * objects, a second's events cost the event loop a few microseconds each to copy; in columns, only
 * the strings are copied.
 */
export interface PackedStatEvents {
  kinds: Uint8Array;
  /** Into `documents`. */
  documents: string[];
  documentOf: Uint32Array;
  at: Float64Array;
  /** Five numbers per event: a view's embedded, start page and host (into `hosts`); a beacon's report; impressions' count. */
  numbers: Float64Array;
  hosts: string[];
  /** Keyed events' keys ("" for the others). */
  readerKeys: string[];
  addressKeys: string[];
  /** Three per event, into `strings`: a visitor's address, its group and user agent; -1 for an event without a visitor. */
  visitors: Int32Array;
  strings: string[];
}

const KINDS = ["view", "download", "beacon", "impressions"] as const;
const WIDTH = 5;

export function packStatEvents(events: readonly StatEvent[]): PackedStatEvents {
  const n = events.length;
  const p: PackedStatEvents = {
    kinds: new Uint8Array(n), documents: [], documentOf: new Uint32Array(n), at: new Float64Array(n),
    numbers: new Float64Array(n * WIDTH), hosts: [], readerKeys: new Array<string>(n), addressKeys: new Array<string>(n),
    visitors: new Int32Array(n * 3).fill(-1), strings: [],
  };
  const docIndex = new Map<string, number>();
  const hostIndex = new Map<string, number>();
  const stringIndex = new Map<string, number>();
  const indexOf = (map: Map<string, number>, list: string[], value: string) => {
    let i = map.get(value);
    if (i === undefined) {
      i = list.push(value) - 1;
      map.set(value, i);
    }
    return i;
  };
  for (let i = 0; i < n; i++) {
    const e = events[i]!;
    const o = i * WIDTH;
    p.kinds[i] = KINDS.indexOf(e.kind);
    p.documentOf[i] = indexOf(docIndex, p.documents, e.documentId);
    p.at[i] = e.at;
    p.readerKeys[i] = e.kind === "impressions" ? "" : e.readerKey ?? "";
    p.addressKeys[i] = e.kind === "view" || e.kind === "download" ? e.addressKey ?? "" : "";
    const visitor = unkeyedVisitor(e);
    if (visitor !== undefined) {
      p.visitors[i * 3] = indexOf(stringIndex, p.strings, visitor.address);
      p.visitors[i * 3 + 1] = indexOf(stringIndex, p.strings, visitor.addressGroup);
      p.visitors[i * 3 + 2] = indexOf(stringIndex, p.strings, visitor.userAgent);
    }
    if (e.kind === "view") {
      p.numbers[o] = e.embedded ? 1 : 0;
      p.numbers[o + 1] = e.startPage;
      p.numbers[o + 2] = indexOf(hostIndex, p.hosts, e.referrerHost);
    } else if (e.kind === "beacon") {
      const r = e.report;
      p.numbers.set([r.page, r.seconds, r.turned ? 1 : 0, r.shares, r.clicks], o);
    } else if (e.kind === "impressions") {
      p.numbers[o] = e.count;
    }
  }
  return p;
}

export function unpackStatEvents(p: PackedStatEvents): StatEvent[] {
  const out: StatEvent[] = [];
  for (let i = 0; i < p.kinds.length; i++) {
    const o = i * WIDTH;
    const documentId = p.documents[p.documentOf[i]!]!;
    const at = p.at[i]!;
    const x = (k: number) => p.numbers[o + k]!;
    const v = p.visitors[i * 3]!;
    const visitor = v < 0 ? undefined : { address: p.strings[v]!, addressGroup: p.strings[p.visitors[i * 3 + 1]!]!, userAgent: p.strings[p.visitors[i * 3 + 2]!]! };
    const who = visitor ? { visitor } : { readerKey: p.readerKeys[i]!, addressKey: p.addressKeys[i]! };
    switch (KINDS[p.kinds[i]!]) {
      case "view":
        out.push({ kind: "view", documentId, ...who, at, embedded: x(0) === 1, startPage: x(1), referrerHost: p.hosts[x(2)]! });
        break;
      case "download":
        out.push({ kind: "download", documentId, ...who, at });
        break;
      case "beacon":
        out.push({ kind: "beacon", documentId, ...(visitor ? { visitor } : { readerKey: p.readerKeys[i]! }), at, report: { page: x(0), seconds: x(1), turned: x(2) === 1, shares: x(3), clicks: x(4) } });
        break;
      default:
        out.push({ kind: "impressions", documentId, at, count: x(0) });
    }
  }
  return out;
}

/** The typed arrays' buffers: moved to the thread with the message. */
export function transferablesOf(p: PackedStatEvents): ArrayBuffer[] {
  return [p.kinds.buffer, p.documentOf.buffer, p.at.buffer, p.numbers.buffer, p.visitors.buffer] as ArrayBuffer[];
}

/** What the event loop sends the statistics writer thread (sqlite-stats-writer.ts → sqlite-stats-worker.ts). */
export interface StatsTask {
  id: number;
  events: PackedStatEvents;
  /** Given: also delete what is kept only for its day (readers, salts) from days before this one (epoch ms). */
  sweepBefore?: number;
}

/** What the thread answers: how many events counted, or why the batch was not written. */
export type StatsAnswer =
  | { id: number; ok: true; counted: number }
  | { id: number; ok: false; message: string; code?: string };
