import { sql, type Kysely } from "kysely";
import { readerKey, SaltKeys, utcDay, visitorKeys } from "../domain/reader-identity.ts";
import {
  applyBeacon, applyDownload, applyView, emptyReaderDay, MAX_READERS_PER_ADDRESS_DAY,
  type BeaconReport, type DayDelta, type DayRange, type ReaderDay,
} from "../domain/statistics.ts";
import { dailySaltsRepo } from "./daily-salts.ts";
import { SettledReaders, DOWNLOADED, TURNED_AWAY, VIEWED } from "./settled-readers.ts";
import { batchLength, statBatchOf, statEventsOf, type StatBatch, type StatEvent } from "./stat-batch.ts";
import type { Database } from "./schema.ts";

export type { StatEvent } from "./stat-batch.ts";

/** An event once keyed: what `record` counts. `addressKey` (of views and downloads) bounds the readers one address can count as. */
type KeyedEvent =
  | { kind: "view"; documentId: string; readerKey: string; addressKey: string; at: number; embedded: boolean; referrerHost: string; startPage: number }
  | { kind: "download"; documentId: string; readerKey: string; addressKey: string; at: number }
  | { kind: "beacon"; documentId: string; readerKey: string; at: number; report: BeaconReport }
  | { kind: "impressions"; documentId: string; at: number; count: number };

/**
 * An event with its visitor replaced by their keys under `salt` (the salt of the event's day):
 * what the counter keeps of a batch the database refused (a written batch is keyed by `keyed`).
 */
export function keyEvent(salt: string, e: StatEvent): StatEvent {
  if (e.kind === "impressions" || e.visitor === undefined) return e;
  const { visitor, ...rest } = e;
  if (rest.kind === "beacon") return { ...rest, readerKey: readerKey(salt, visitor.address, visitor.userAgent, e.documentId) };
  return { ...rest, ...visitorKeys(salt, visitor, e.documentId) };
}

/** Every figure of decisions §15 over a range of days. */
export interface StatTotals {
  impressions: number;
  views: number;
  embeddedViews: number;
  reads: number;
  /** Seconds, averaged over reads (0 without reads). */
  averageTimeSpent: number;
  downloads: number;
  shares: number;
  clicks: number;
}

export interface StatDay extends StatTotals {
  day: string;
}

export interface StatsReport {
  range: DayRange;
  totals: StatTotals;
  /** Days with anything counted, in order (days without are all zero). */
  days: StatDay[];
  /**
   * The account's documents with most views (an account report only), counted over the whole
   * months the range touches (`months`).
   */
  topDocuments: Array<{ documentId: string; name: string; title: string } & StatTotals>;
  /** The months (`YYYY-MM`, first and last) the top documents are counted over. */
  months: { from: string; to: string };
  /** Views by referring host ("" for none) and embed, most first. */
  referrers: Array<{ host: string; embedded: boolean; views: number }>;
  /** A document report only: for each page, the share of the range's readers (0..1) who reached it. */
  depth: Array<{ page: number; readers: number; share: number }>;
}

export interface StatsQuery {
  accountId: number;
  /** One document of the account; undefined: the whole account. */
  documentId?: string;
  range: DayRange;
  /** How many top documents and referrers (10 and 20 by default). */
  top?: number;
}

/** The transaction lock of a batch on PostgreSQL (any constant of our own). */
const STATS_LOCK = 0x5175_5354;

/** Rows per statement: well within SQLite's bound parameters for the widest row (13 columns). */
const CHUNK = 500;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

type DayRow = Omit<Database["statDays"], never>;

const FIGURES = ["impressions", "views", "embeddedViews", "reads", "readSeconds", "downloads", "shares", "clicks"] as const;

function totalsOf(r: Partial<Record<(typeof FIGURES)[number], number | string | null>>): StatTotals {
  const n = (k: (typeof FIGURES)[number]) => Number(r[k] ?? 0);
  return {
    impressions: n("impressions"), views: n("views"), embeddedViews: n("embeddedViews"), reads: n("reads"),
    averageTimeSpent: n("reads") > 0 ? Math.round(n("readSeconds") / n("reads")) : 0,
    downloads: n("downloads"), shares: n("shares"), clicks: n("clicks"),
  };
}

interface ReaderRow extends ReaderDay {
  day: string;
  readerKey: string;
  documentId: string;
  newcomers: number;
  changed: boolean;
}

/** `utcDay`, remembering the last day it met: the same text for every instant of that day. */
function dayMemo(): (at: number) => string {
  let from = 0;
  let to = -1;
  let text = "";
  return (at) => {
    if (at < from || at > to) {
      text = utcDay(at);
      from = Date.parse(`${text}T00:00:00.000Z`);
      to = from + 86_400_000 - 1;
    }
    return text;
  };
}

/**
 * Readership statistics (decisions §15, migration 0013): the per-document per-day figures, the
 * depth curve's per-page counts, referrers, and today's readers (by key only) so each counts once.
 */
export function statisticsRepo(
  db: Kysely<Database>,
  dialect: "sqlite" | "postgres",
  /** The dialect's writer off the event loop (SQLite's writer process), if it has one. */
  writeOffLoop?: (batch: StatBatch, sweepBefore?: number) => Promise<number>,
) {
  /**
   * `reader_key` among `keys`, as one parameter: the statement's text is the same for every batch,
   * so it is prepared once (a list of up to 500 placeholders was built, compiled and prepared anew
   * for each batch).
   */
  const readerKeyIn = (keys: string[]) =>
    dialect === "postgres"
      ? sql<boolean>`reader_key = any(${keys}::text[])`
      : sql<boolean>`reader_key in (select value from json_each(${JSON.stringify(keys)}))`;
  /**
   * Writes readers whole, as one JSON parameter (an array of 13 values a row, in the columns' order):
   * one statement, prepared once, where a query builder made and compiled 13 values for every row
   * of every batch (a batch of new readers writes two rows a view).
   */
  const upsertReaders = async (trx: Kysely<Database>, rows: readonly ReaderRow[]) => {
    const values = JSON.stringify(rows.map((r) => [
      r.day, r.readerKey, r.documentId, r.firstAt, r.lastAt, r.viewed ? 1 : 0, r.read ? 1 : 0, r.downloaded ? 1 : 0,
      r.maxPage, r.seconds, r.shares, r.clicks, r.newcomers,
    ]));
    const rowsOf = dialect === "postgres"
      ? sql`select e->>0, e->>1, e->>2, (e->>3)::bigint, (e->>4)::bigint, (e->>5)::integer, (e->>6)::integer, (e->>7)::integer,
            (e->>8)::integer, (e->>9)::integer, (e->>10)::integer, (e->>11)::integer, (e->>12)::integer
            from jsonb_array_elements(${values}::jsonb) as e`
      // SQLite's upsert after a SELECT needs a WHERE, so that ON CONFLICT is not read as a join's.
      : sql`select value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7,
            value->>8, value->>9, value->>10, value->>11, value->>12 from json_each(${values}) where true`;
    await sql`insert into stat_readers (day, reader_key, document_id, first_at, last_at, viewed, "read", downloaded, max_page, seconds, shares, clicks, newcomers)
      ${rowsOf}
      on conflict (day, reader_key) do update set last_at = excluded.last_at, viewed = excluded.viewed, "read" = excluded."read",
        downloaded = excluded.downloaded, max_page = excluded.max_page, seconds = excluded.seconds, shares = excluded.shares,
        clicks = excluded.clicks, newcomers = excluded.newcomers`.execute(trx);
  };
  /** A batch's events fall on one or two days: each day's text is made once. */
  const dayOf = dayMemo();
  const settled = new SettledReaders();

  const salts = dailySaltsRepo(db);
  /**
   * A batch's events, each visitor replaced by their keys under their day's salt: a day's salt
   * read once a batch, and each key looked up once a batch (a reader's view and beacons, and an
   * address's many readers, come in the same batches), remembered by the visitor's and the
   * document's indexes in the batch rather than by their text; each key made once a day
   * (`SaltKeys`, the last two salts').
   */
  let saltKeys: SaltKeys[] = [];
  const keysUnder = (salt: string): SaltKeys => {
    let k = saltKeys.find((s) => s.salt === salt);
    if (!k) {
      k = new SaltKeys(salt);
      // A batch's events fall on one or two days.
      saltKeys = [k, ...saltKeys.slice(0, 1)];
    }
    return k;
  };
  async function keyed(b: StatBatch): Promise<KeyedEvent[]> {
    const saltOf = new Map<string, SaltKeys>();
    for (let i = 0; i < b.at.length; i++) {
      if (b.visitors[i * 3]! < 0) continue;
      const day = dayOf(b.at[i]!);
      if (!saltOf.has(day)) saltOf.set(day, keysUnder(await salts.saltNoOlderThan(b.at[i]!)));
    }
    const strings = b.strings.length;
    const documents = b.documents.length;
    const made = new Map<string, { readers: Map<number, string>; addresses: Map<number, string> }>();
    return statEventsOf(b, (i, address, group, userAgent) => {
      const day = dayOf(b.at[i]!);
      const under = saltOf.get(day)!;
      let keys = made.get(day);
      if (!keys) {
        keys = { readers: new Map(), addresses: new Map() };
        made.set(day, keys);
      }
      const doc = b.documentOf[i]!;
      const documentId = b.documents[doc]!;
      const r = (address * strings + userAgent) * documents + doc;
      let reader = keys.readers.get(r);
      if (reader === undefined) {
        reader = under.readerKey(b.strings[address]!, b.strings[userAgent]!, documentId);
        keys.readers.set(r, reader);
      }
      const a = group * documents + doc;
      let addressOf = keys.addresses.get(a);
      if (addressOf === undefined) {
        addressOf = under.addressKey(b.strings[group]!, documentId);
        keys.addresses.set(a, addressOf);
      }
      return { readerKey: reader, addressKey: addressOf };
    }) as KeyedEvent[];
  }

  /** Applies a batch; answers how many events counted for a document that still exists. */
  async function record(given: readonly StatEvent[] | StatBatch): Promise<number> {
    const batch = "kinds" in given ? given : statBatchOf(given);
    if (batchLength(batch) === 0) return 0;
    const events = await keyed(batch);
    const ids = [...new Set(events.map((e) => e.documentId))];
    const docs = new Map<string, { accountId: number; pageCount: number }>();
    for (const part of chunks(ids)) {
      const rows = await db.selectFrom("documents").select(["documentId", "accountId", "pageCount"]).where("documentId", "in", part).execute();
      for (const r of rows) docs.set(r.documentId, { accountId: r.accountId, pageCount: r.pageCount });
    }
    // Events that can change nothing today (settled-readers.ts) are left out of the transaction;
    // a view or download that adds nothing still counts as written, as it does below.
    let noops = 0;
    const known = events.filter((e) => {
      if (!docs.has(e.documentId)) return false;
      if (e.kind === "impressions") return true;
      const verdict = SettledReaders.verdict(e.kind, settled.of(dayOf(e.at), e.readerKey, e.documentId));
      if (verdict === "noop") noops++;
      return verdict === "apply";
    });
    if (known.length === 0) return noops;

    // Reader rows this batch touches: the readers, and the addresses their first view came from.
    // Only views and downloads make rows: a beacon counts on a reader already there, or for nothing.
    const wanted = new Map<string, { day: string; readerKey: string; documentId: string; at: number; make: boolean }>();
    const want = (day: string, readerKey: string, documentId: string, at: number, make: boolean) => {
      const w = wanted.get(`${day} ${readerKey}`);
      if (!w) wanted.set(`${day} ${readerKey}`, { day, readerKey, documentId, at, make });
      else w.make ||= make;
    };
    for (const e of known) {
      if (e.kind === "impressions") continue;
      const day = dayOf(e.at);
      want(day, e.readerKey, e.documentId, e.at, e.kind !== "beacon");
      if (e.kind !== "beacon") want(day, e.addressKey, e.documentId, e.at, true);
    }

    const outcome = await db.transaction().execute(async (trx) => {
      // One batch at a time across processes (readers are read, then written whole): SQLite's
      // transactions hold the write lock from their start (begun IMMEDIATE, dialects/sqlite.ts),
      // PostgreSQL takes a transaction lock.
      if (dialect === "postgres") await sql`select pg_advisory_xact_lock(${STATS_LOCK})`.execute(trx);
      const readers = new Map<string, ReaderRow>();
      const turnedAway: Array<{ day: string; readerKey: string; documentId: string }> = [];
      const byDay = new Map<string, string[]>();
      for (const w of wanted.values()) {
        const keys = byDay.get(w.day);
        if (keys) keys.push(w.readerKey);
        else byDay.set(w.day, [w.readerKey]);
      }
      for (const [day, keys] of byDay) {
        for (const part of chunks(keys)) {
          const rows = await trx.selectFrom("statReaders").selectAll().where("day", "=", day).where(readerKeyIn(part)).execute();
          for (const r of rows) {
            readers.set(`${r.day} ${r.readerKey}`, {
              day: r.day, readerKey: r.readerKey, documentId: r.documentId, firstAt: Number(r.firstAt), lastAt: Number(r.lastAt),
              viewed: r.viewed === 1, read: r.read === 1, downloaded: r.downloaded === 1, maxPage: r.maxPage, seconds: r.seconds,
              shares: r.shares, clicks: r.clicks, newcomers: r.newcomers, changed: false,
            });
          }
        }
      }
      // Readers (and addresses) new today: made here, written only if something counted for them.
      for (const [k, w] of wanted) {
        if (w.make && !readers.has(k)) {
          readers.set(k, { day: w.day, readerKey: w.readerKey, documentId: w.documentId, ...emptyReaderDay(w.at), newcomers: 0, changed: false });
        }
      }

      const days = new Map<string, DayRow>();
      const pages = new Map<string, { documentId: string; day: string; page: number; readers: number }>();
      const referrers = new Map<string, { documentId: string; day: string; host: string; embedded: number; accountId: number; views: number }>();
      const dayRow = (documentId: string, day: string): DayRow => {
        let row = days.get(`${documentId} ${day}`);
        if (!row) {
          row = { documentId, day, accountId: docs.get(documentId)!.accountId, impressions: 0, views: 0, embeddedViews: 0, reads: 0, readSeconds: 0, downloads: 0, shares: 0, clicks: 0 };
          days.set(`${documentId} ${day}`, row);
        }
        return row;
      };
      const addPage = (documentId: string, day: string, page: number, by: number) => {
        const k = `${documentId} ${day} ${page}`;
        const row = pages.get(k) ?? { documentId, day, page, readers: 0 };
        row.readers += by;
        pages.set(k, row);
      };
      const add = (documentId: string, day: string, d: DayDelta) => {
        const row = dayRow(documentId, day);
        for (const f of ["views", "embeddedViews", "reads", "readSeconds", "downloads", "shares", "clicks"] as const) row[f] += d[f];
        if (d.depth && d.depth.to !== d.depth.from) {
          if (d.depth.from > 0) addPage(documentId, day, d.depth.from, -1);
          addPage(documentId, day, d.depth.to, 1);
        }
        if (d.referrer) {
          const embedded = d.referrer.embedded ? 1 : 0;
          const k = `${documentId} ${day} ${embedded} ${d.referrer.host}`;
          const row = referrers.get(k) ?? { documentId, day, host: d.referrer.host, embedded, accountId: docs.get(documentId)!.accountId, views: 0 };
          row.views += 1;
          referrers.set(k, row);
        }
      };
      /** A reader new today for this document takes one of its address's places, if one is left. */
      const admit = (r: ReaderRow, addressKey: string): boolean => {
        if (r.viewed || r.downloaded) return true;
        const address = readers.get(`${r.day} ${addressKey}`);
        if (!address || address.newcomers >= MAX_READERS_PER_ADDRESS_DAY) return false;
        address.newcomers += 1;
        address.changed = true;
        return true;
      };

      let counted = 0;
      for (const e of known) {
        const day = dayOf(e.at);
        if (e.kind === "impressions") {
          dayRow(e.documentId, day).impressions += Math.max(0, Math.floor(e.count));
          counted++;
          continue;
        }
        const r = readers.get(`${day} ${e.readerKey}`);
        // A key already used for another document (never, short of a forged key) counts for nothing.
        if (!r || r.documentId !== e.documentId) continue;
        const doc = docs.get(e.documentId)!;
        let d: DayDelta;
        if (e.kind === "view") {
          if (!admit(r, e.addressKey)) {
            turnedAway.push({ day, readerKey: e.readerKey, documentId: e.documentId });
            continue;
          }
          d = applyView(r, { embedded: e.embedded, referrerHost: e.referrerHost, startPage: e.startPage, pageCount: doc.pageCount });
        } else if (e.kind === "download") {
          if (!admit(r, e.addressKey)) {
            turnedAway.push({ day, readerKey: e.readerKey, documentId: e.documentId });
            continue;
          }
          d = applyDownload(r);
        } else {
          d = applyBeacon(r, e.report, e.at, doc.pageCount);
        }
        // A repeated view or download changes nothing: its row is not written again.
        if (e.kind === "beacon" || d.views || d.downloads || d.depth) r.changed = true;
        add(e.documentId, day, d);
        counted++;
      }

      const changed = [...readers.values()].filter((r) => r.changed);
      for (const part of chunks(changed)) await upsertReaders(trx, part);
      for (const part of chunks([...days.values()])) {
        await trx
          .insertInto("statDays")
          .values(part)
          .onConflict((oc) => oc.columns(["documentId", "day"]).doUpdateSet((eb) => ({
            impressions: eb("statDays.impressions", "+", eb.ref("excluded.impressions")),
            views: eb("statDays.views", "+", eb.ref("excluded.views")),
            embeddedViews: eb("statDays.embeddedViews", "+", eb.ref("excluded.embeddedViews")),
            reads: eb("statDays.reads", "+", eb.ref("excluded.reads")),
            readSeconds: eb("statDays.readSeconds", "+", eb.ref("excluded.readSeconds")),
            downloads: eb("statDays.downloads", "+", eb.ref("excluded.downloads")),
            shares: eb("statDays.shares", "+", eb.ref("excluded.shares")),
            clicks: eb("statDays.clicks", "+", eb.ref("excluded.clicks")),
          })))
          .execute();
      }
      // The account's days and referrers, and the documents' months, move with them.
      const accountDays = new Map<string, Database["statAccountDays"]>();
      const months = new Map<string, Database["statMonths"]>();
      for (const d of days.values()) {
        const a = accountDays.get(`${d.accountId} ${d.day}`) ?? { ...d, impressions: 0, views: 0, embeddedViews: 0, reads: 0, readSeconds: 0, downloads: 0, shares: 0, clicks: 0 };
        for (const f of FIGURES) a[f] += d[f];
        accountDays.set(`${d.accountId} ${d.day}`, { accountId: a.accountId, day: a.day, impressions: a.impressions, views: a.views, embeddedViews: a.embeddedViews, reads: a.reads, readSeconds: a.readSeconds, downloads: a.downloads, shares: a.shares, clicks: a.clicks });
        const month = d.day.slice(0, 7);
        const m = months.get(`${d.documentId} ${month}`) ?? { documentId: d.documentId, month, accountId: d.accountId, impressions: 0, views: 0, reads: 0, readSeconds: 0 };
        m.impressions += d.impressions;
        m.views += d.views;
        m.reads += d.reads;
        m.readSeconds += d.readSeconds;
        months.set(`${d.documentId} ${month}`, m);
      }
      const accountReferrers = new Map<string, Database["statAccountReferrers"]>();
      for (const r of referrers.values()) {
        const k = `${r.accountId} ${r.day} ${r.embedded} ${r.host}`;
        const a = accountReferrers.get(k) ?? { accountId: r.accountId, day: r.day, host: r.host, embedded: r.embedded, views: 0 };
        a.views += r.views;
        accountReferrers.set(k, a);
      }
      for (const part of chunks([...accountDays.values()])) {
        await trx
          .insertInto("statAccountDays")
          .values(part)
          .onConflict((oc) => oc.columns(["accountId", "day"]).doUpdateSet((eb) => ({
            impressions: eb("statAccountDays.impressions", "+", eb.ref("excluded.impressions")),
            views: eb("statAccountDays.views", "+", eb.ref("excluded.views")),
            embeddedViews: eb("statAccountDays.embeddedViews", "+", eb.ref("excluded.embeddedViews")),
            reads: eb("statAccountDays.reads", "+", eb.ref("excluded.reads")),
            readSeconds: eb("statAccountDays.readSeconds", "+", eb.ref("excluded.readSeconds")),
            downloads: eb("statAccountDays.downloads", "+", eb.ref("excluded.downloads")),
            shares: eb("statAccountDays.shares", "+", eb.ref("excluded.shares")),
            clicks: eb("statAccountDays.clicks", "+", eb.ref("excluded.clicks")),
          })))
          .execute();
      }
      for (const part of chunks([...months.values()])) {
        await trx
          .insertInto("statMonths")
          .values(part)
          .onConflict((oc) => oc.columns(["documentId", "month"]).doUpdateSet((eb) => ({
            impressions: eb("statMonths.impressions", "+", eb.ref("excluded.impressions")),
            views: eb("statMonths.views", "+", eb.ref("excluded.views")),
            reads: eb("statMonths.reads", "+", eb.ref("excluded.reads")),
            readSeconds: eb("statMonths.readSeconds", "+", eb.ref("excluded.readSeconds")),
          })))
          .execute();
      }
      for (const part of chunks([...accountReferrers.values()])) {
        await trx
          .insertInto("statAccountReferrers")
          .values(part)
          .onConflict((oc) => oc.columns(["accountId", "day", "host", "embedded"]).doUpdateSet((eb) => ({
            views: eb("statAccountReferrers.views", "+", eb.ref("excluded.views")),
          })))
          .execute();
      }
      for (const part of chunks([...pages.values()].filter((p) => p.readers !== 0))) {
        await trx
          .insertInto("statPages")
          .values(part)
          .onConflict((oc) => oc.columns(["documentId", "day", "page"]).doUpdateSet((eb) => ({
            readers: eb("statPages.readers", "+", eb.ref("excluded.readers")),
          })))
          .execute();
      }
      for (const part of chunks([...referrers.values()])) {
        await trx
          .insertInto("statReferrers")
          .values(part)
          .onConflict((oc) => oc.columns(["documentId", "day", "host", "embedded"]).doUpdateSet((eb) => ({
            views: eb("statReferrers.views", "+", eb.ref("excluded.views")),
          })))
          .execute();
      }
      return { counted, readers, turnedAway };
    });
    // Committed: what it settled is remembered for the next batches.
    for (const r of outcome.readers.values()) settled.note(r.day, r.readerKey, r.documentId, (r.viewed ? VIEWED : 0) | (r.downloaded ? DOWNLOADED : 0));
    for (const t of outcome.turnedAway) settled.note(t.day, t.readerKey, t.documentId, TURNED_AWAY);
    return outcome.counted + noops;
  }

  /** Deletes the readers of days before `now`'s (decisions §15). */
  async function deleteReadersBefore(now: number): Promise<number> {
    const r = await db.deleteFrom("statReaders").where("day", "<", utcDay(now)).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Deletes what is kept only for its day: the readers and the salts of days before `now`'s. */
  async function sweep(now: number): Promise<void> {
    await deleteReadersBefore(now);
    await dailySaltsRepo(db).deleteBefore(now);
  }

  /**
   * A batch, then the sweep: the batch is committed first, so a sweep that fails (tried again a
   * minute later: it only deletes what is past) never makes the counter write the batch twice.
   */
  async function recordAndSweep(batch: StatBatch, sweepBefore?: number): Promise<number> {
    const counted = await record(batch);
    if (sweepBefore !== undefined) await sweep(sweepBefore).catch(() => undefined);
    return counted;
  }

  return {
    record,
    deleteReadersBefore,
    sweep,
    recordAndSweep,

    /**
     * What the counter calls (src/web/stats-counter.ts): `record`, then `sweep` when `sweepBefore`
     * is given, in one call. On SQLite they run in a process of its own with its own connection
     * (dialects/sqlite-stats-writer.ts), so the event loop never waits for a batch. The sweep alone
     * (a few deletes, once a minute) is done here: the writer process, and the memory it takes, start only
     * once there is something to count.
     */
    async write(batch: StatBatch, sweepBefore?: number): Promise<number> {
      return writeOffLoop && batchLength(batch) > 0 ? writeOffLoop(batch, sweepBefore) : recordAndSweep(batch, sweepBefore);
    },

    /**
     * The figures of an account, or of one of its documents, over a range of UTC days: what the
     * app's statistics pages, `svc.documents.stats` and `GET /v2/stats` all answer from. A
     * documentId of another account reads as a document with nothing counted.
     */
    async report(q: StatsQuery): Promise<StatsReport> {
      const top = q.top ?? 10;
      const dayRows = q.documentId === undefined
        ? await db
            .selectFrom("statAccountDays")
            .select(["day", ...FIGURES])
            .where("accountId", "=", q.accountId)
            .where("day", ">=", q.range.from)
            .where("day", "<=", q.range.to)
            .orderBy("day")
            .execute()
        : await db
            .selectFrom("statDays")
            .select(["day", ...FIGURES])
            .where("accountId", "=", q.accountId)
            .where("documentId", "=", q.documentId)
            .where("day", ">=", q.range.from)
            .where("day", "<=", q.range.to)
            .orderBy("day")
            .execute();
      // A day whose documents were all deleted since is all zeros: not a day with anything counted.
      const days = dayRows.map((r) => ({ day: r.day, ...totalsOf(r) })).filter((d) => d.views || d.impressions || d.downloads || d.reads || d.shares || d.clicks);
      const sums: Record<string, number> = {};
      for (const f of FIGURES) sums[f] = dayRows.reduce((s, r) => s + Number(r[f] ?? 0), 0);
      const totals = totalsOf(sums);

      let topDocuments: StatsReport["topDocuments"] = [];
      if (q.documentId === undefined) {
        // Counted over the whole months the period touches (stat_months): a thousand documents'
        // year is then 12,000 rows to sum, not 365,000.
        const rows = await db
          .selectFrom("statMonths")
          .select((eb) => ["documentId", ...(["impressions", "views", "reads", "readSeconds"] as const).map((f) => eb.fn.sum<number>(f).as(f))])
          .where("accountId", "=", q.accountId)
          .where("month", ">=", q.range.from.slice(0, 7))
          .where("month", "<=", q.range.to.slice(0, 7))
          .groupBy("documentId")
          .orderBy(sql`sum(views)`, "desc")
          .orderBy("documentId")
          .limit(top)
          .execute();
        const names = rows.length === 0 ? [] : await db
          .selectFrom("documents")
          .select(["documentId", "name", "title"])
          .where("documentId", "in", rows.map((r) => r.documentId))
          .execute();
        const byId = new Map(names.map((n) => [n.documentId, n]));
        topDocuments = rows.flatMap((r) => {
          const n = byId.get(r.documentId);
          return n ? [{ documentId: r.documentId, name: n.name, title: n.title, ...totalsOf(r) }] : [];
        });
      }

      const refQ = q.documentId === undefined
        ? db
            .selectFrom("statAccountReferrers")
            .select((eb) => ["host", "embedded", eb.fn.sum<number>("views").as("views")])
            .where("accountId", "=", q.accountId)
            .where("day", ">=", q.range.from)
            .where("day", "<=", q.range.to)
            .groupBy(["host", "embedded"])
            .having(sql`sum(views)`, ">", 0)
            .orderBy(sql`sum(views)`, "desc")
            .orderBy("host")
            .limit(q.top ?? 20)
        : db
            .selectFrom("statReferrers")
            .select((eb) => ["host", "embedded", eb.fn.sum<number>("views").as("views")])
            .where("accountId", "=", q.accountId)
            .where("documentId", "=", q.documentId)
            .where("day", ">=", q.range.from)
            .where("day", "<=", q.range.to)
            .groupBy(["host", "embedded"])
            .orderBy(sql`sum(views)`, "desc")
            .orderBy("host")
            .limit(q.top ?? 20);
      const referrers = (await refQ.execute()).map((r) => ({ host: r.host, embedded: r.embedded === 1, views: Number(r.views) }));

      let depth: StatsReport["depth"] = [];
      if (q.documentId !== undefined) {
        const doc = await db
          .selectFrom("documents")
          .select("pageCount")
          .where("documentId", "=", q.documentId)
          .where("accountId", "=", q.accountId)
          .executeTakeFirst();
        if (doc) {
          const ended = await db
            .selectFrom("statPages")
            .select((eb) => ["page", eb.fn.sum<number>("readers").as("readers")])
            .where("documentId", "=", q.documentId)
            .where("day", ">=", q.range.from)
            .where("day", "<=", q.range.to)
            .groupBy("page")
            .execute();
          const endedAt = new Map(ended.map((r) => [r.page, Number(r.readers)]));
          const last = Math.max(doc.pageCount, ...endedAt.keys());
          const reached: number[] = [];
          let running = 0;
          for (let p = last; p >= 1; p--) {
            running += endedAt.get(p) ?? 0;
            reached[p] = running;
          }
          const first = reached[1] ?? 0;
          for (let p = 1; p <= doc.pageCount; p++) {
            depth.push({ page: p, readers: reached[p] ?? 0, share: first > 0 ? (reached[p] ?? 0) / first : 0 });
          }
        } else depth = [];
      }
      return { range: q.range, totals, days, topDocuments, months: { from: q.range.from.slice(0, 7), to: q.range.to.slice(0, 7) }, referrers, depth };
    },
  };
}

export type StatisticsRepo = ReturnType<typeof statisticsRepo>;
