import type { ColumnDefinitionBuilder, Kysely, RawBuilder, SelectQueryBuilder } from "kysely";
import type { Database } from "../schema.ts";
import type { StatBatch } from "../stat-batch.ts";
import type { SearchEngine, SearchMatch, SearchRequest } from "../search-index.ts";

/**
 * Tells idle workers that a job was queued, by whichever process queued it, so they claim it at
 * once instead of at their next poll. Best effort by design: a wake-up may be missed (a dropped
 * connection, a file system without change events) or come when nothing was queued, so it only
 * shortens a worker's wait; polling still finds every job.
 */
export interface QueuedJobsNotifier {
  /** Calls `onQueued` soon after a job is queued; resolves with the function that stops it. */
  watchQueuedJobs(onQueued: () => void): Promise<() => Promise<void>>;
}

/** What the notifiers say of their trouble (a pino logger fits). */
export interface WakeupLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The few things that differ between SQLite and PostgreSQL; everything else is written once. */
export interface StoreDialect {
  readonly name: "sqlite" | "postgres";
  readonly db: Kysely<Database>;
  /** An integer primary key the database numbers itself. */
  autoId(col: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /**
   * Makes the select that picks a job to claim skip rows other workers hold (PostgreSQL's
   * `FOR UPDATE SKIP LOCKED`); SQLite serialises writers, so its claim needs nothing more.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  lockForClaim<QB extends SelectQueryBuilder<any, any, any>>(qb: QB): QB;
  /**
   * A text column as it must be ordered so both dialects sort alike, in code point order
   * (SQLite's BINARY collation is that order for UTF-8; PostgreSQL needs "C").
   */
  orderableText(column: string): RawBuilder<unknown>;
  /**
   * Statements creating the triggers that add 1 to `accounts.documents_version` whenever a row of
   * `documents` is inserted, updated or deleted, in the same transaction as the change.
   */
  documentsVersionTriggers(): string[];
  /**
   * A number that is the same on two calls only if no write was committed (or begun) in between,
   * by this process or any other; undefined when that cannot be told now without a query. Lets the
   * request path keep what it read per key without serving a revoked key or a stale version.
   * SQLite tells it cheaply; PostgreSQL has no such counter, so it leaves this out. The answer may
   * come a moment later (SQLite's looks are shared by the questions of one turn of the event loop),
   * but always from a look taken after the question was asked.
   */
  changeEpoch?(): Promise<number | undefined>;
  /** The full-text engine: FTS5 or PostgreSQL text search (decisions §11). */
  readonly search: SearchEngine;
  /**
   * Runs one search off the event loop, bounded (sqlite-search-pool.ts): SQLite's driver is
   * synchronous, so its searches run in threads of their own. Left out where the driver is
   * asynchronous (PostgreSQL): the store runs `search.search` on `db` behind a SearchGate.
   */
  runSearch?(req: SearchRequest): Promise<{ totalCount: number; matches: SearchMatch[] }>;
  /**
   * Writes a batch of the statistics counter off the event loop (sqlite-stats-writer.ts), with the
   * daily sweep when `sweepBefore` is given; answers how many events counted. Left out where the
   * driver is asynchronous (PostgreSQL) or there is no file a thread could open (`:memory:`): the
   * store writes the batch on `db`.
   */
  writeStatistics?(batch: StatBatch, sweepBefore?: number): Promise<number>;
  /**
   * Whether a driver error is a unique (or primary key) constraint's refusal: the store answers
   * that as an outcome ("name-taken"), so no other part ever reads a driver's error codes.
   */
  isUniqueViolation(err: unknown): boolean;
  /**
   * Whether a driver error says the database cannot be used now (unreachable, restarting, its disk
   * full, locked past the wait): a state that passes, answered "try again" rather than as a bug.
   */
  isUnavailable(err: unknown): boolean;
  /**
   * Calls `onQueued` soon after a job is queued by any process (PostgreSQL: LISTEN/NOTIFY; SQLite:
   * the file's changes); resolves with the function that stops it. See QueuedJobsNotifier.
   */
  watchQueuedJobs(onQueued: () => void, log?: WakeupLog): Promise<() => Promise<void>>;
  /** Removes whatever the dialect created for tests (the PostgreSQL test database); no-op otherwise. */
  close(): Promise<void>;
}
