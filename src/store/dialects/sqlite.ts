import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import {
  CamelCasePlugin, CompiledQuery, Kysely, sql, SqliteDialect, SqliteDriver, type DatabaseConnection, type Dialect, type SqliteDialectConfig,
} from "kysely";
import type { Database } from "../schema.ts";
import type { StoreDialect } from "./dialect.ts";
import { sqliteJobWakeups } from "./sqlite-job-wakeups.ts";
import type { SearchGate } from "../search-gate.ts";
import { sqliteSearch } from "./sqlite-search.ts";
import { sqliteSearchPool, type SqliteSearchPool } from "./sqlite-search-pool.ts";
import { sqliteStatsWriter, type SqliteStatsWriter } from "./sqlite-stats-writer.ts";

/** Distinct SQL texts the app runs are a few hundred at most; more would mean ad-hoc SQL. */
const CACHED_STATEMENTS = 500;

/** better-sqlite3's extended result codes for a refused unique index and a refused primary key. */
const UNIQUE_VIOLATIONS: ReadonlySet<unknown> = new Set(["SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"]);

/**
 * Transactions begun IMMEDIATE: each takes the database's write lock at its start, waiting for it
 * as long as busy_timeout allows. Begun deferred (Kysely's `begin`), a transaction that read before
 * it wrote held a snapshot from its first read, and a write by another connection in between (the
 * statistics writer's process every half second, a `quire worker` claiming a job) made SQLite
 * refuse its first write at once, SQLITE_BUSY_SNAPSHOT, which no wait can cure: the app's
 * "Approve selected" answered 500 when a statistics batch landed between its read and its update
 * (test/store/sqlite-write-transactions.test.ts). The connection is the process's only one, so its
 * transactions were one at a time already; readers on other connections are not held up (WAL).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}

/** Kysely's SQLite dialect with ImmediateSqliteDriver: every connection that writes the file opens with it (this one, the statistics writer's). */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.config);
  }
}

export function immediateSqliteDialect(config: SqliteDialectConfig): Dialect {
  return new ImmediateSqliteDialect(config);
}

/** What the change epoch needs to hear of the statements this connection runs. */
export interface StatementActivity {
  /** A statement that may write is about to run. */
  noteWrite(): void;
  /** A statement's rows are being iterated (streamed) from now on, until `noteIterationEnded`. */
  noteIterationStarted(): void;
  noteIterationEnded(): void;
}

/**
 * Kysely prepares every query it runs, and better-sqlite3 compiles the SQL on each prepare: for
 * the small queries of the request path that costs more than running them. The connection is
 * used by one query at a time (Kysely holds it for the whole of a streamed query too), so a
 * statement is never run twice at once.
 *
 * Kysely runs each statement right after preparing it, in the same synchronous call, so
 * `activity` hears of every statement that may write just before it runs, and of every streamed
 * one for as long as it is open.
 */
export function withStatementCache(conn: SQLite.Database, activity: StatementActivity): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = conn.prepare.bind(conn);
  conn.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = countingIterations(prepare(source), activity);
      if (cache.size >= CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
      cache.set(source, statement);
    }
    if (!statement.readonly) activity.noteWrite();
    return statement;
  }) as typeof conn.prepare;
  return conn;
}

/**
 * An iteration that is never finished (a consumer that stops pulling without closing) keeps
 * counting as open: the epoch then stays unknown, which costs queries, never freshness.
 */
function countingIterations(statement: SQLite.Statement, activity: StatementActivity): SQLite.Statement {
  const iterate = statement.iterate.bind(statement);
  statement.iterate = function* (...args: unknown[]) {
    activity.noteIterationStarted();
    try {
      yield* iterate(...args);
    } finally {
      activity.noteIterationEnded();
    }
  } as typeof statement.iterate;
  return statement;
}

/**
 * `PRAGMA data_version` changes when another connection (the worker, the CLI, another process)
 * commits; this connection's own writes are counted as they are prepared. Inside a transaction,
 * or while a statement's rows are being iterated, the answer is "unknown": the connection reads
 * from a snapshot that may hide other connections' commits, and a reader must wait for the
 * connection like any query.
 *
 * Asking costs two locks and a stat of the file (a few µs, a tenth of a cached
 * `svc.documents.list`), so the questions asked while the event loop handles one round of I/O
 * share one look, taken once that round's callbacks have run (setImmediate). That stays exact:
 * a look answers only questions asked before it was taken, so any commit that a caller could
 * have seen finish before asking (another process's, the CLI's) happened before the look.
 */
function changeEpochOf(conn: SQLite.Database) {
  // Prepared before withStatementCache wraps `prepare`: this statement is neither cached nor counted.
  const dataVersion = conn.prepare("PRAGMA data_version").pluck();
  let seenVersion = dataVersion.get() as number;
  let epoch = 0;
  let iterating = 0;
  let nextLook: Promise<number | undefined> | undefined;
  const look = (): number | undefined => {
    if (!conn.open || conn.inTransaction || iterating > 0) return undefined;
    const version = dataVersion.get() as number;
    if (version !== seenVersion) {
      seenVersion = version;
      epoch++;
    }
    return epoch;
  };
  return {
    noteWrite: () => void epoch++,
    noteIterationStarted: () => void iterating++,
    noteIterationEnded: () => void iterating--,
    current: (): Promise<number | undefined> =>
      (nextLook ??= new Promise((resolve) => {
        setImmediate(() => {
          nextLook = undefined;
          try {
            resolve(look());
          } catch {
            // The caller's own query then meets whatever this met.
            resolve(undefined);
          }
        });
      })),
  };
}

/**
 * `searchGate`: searches run in threads of their own (as many as it lets run at once); without it,
 * or for a `:memory:` database (no file a thread could open), on this connection.
 */
export function openSqlite(file: string, searchGate?: SearchGate): StoreDialect {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  let pool: SqliteSearchPool | undefined;
  let statsWriter: SqliteStatsWriter | undefined;
  let closed = false;
  let epoch: ReturnType<typeof changeEpochOf> | undefined;
  const db = new Kysely<Database>({
    dialect: immediateSqliteDialect({
      database: async () => {
        const conn = new SQLite(file);
        // WAL lets readers (the reader pages, `quire accounts list`) run beside a writing server.
        conn.pragma("journal_mode = WAL");
        conn.pragma("synchronous = NORMAL");
        conn.pragma("foreign_keys = ON");
        conn.pragma("busy_timeout = 5000");
        // 64 MiB of pages at most, taken as they are read (2 MiB by default): a search of a word in
        // 10,000 documents of 100 pages read its document lists and pages from the OS again each
        // time; with them kept, the search bench's p99 went from 59 to 33 ms.
        conn.pragma("cache_size = -65536");
        epoch = changeEpochOf(conn);
        return withStatementCache(conn, epoch);
      },
    }),
    plugins: [new CamelCasePlugin()],
  });
  return {
    name: "sqlite",
    db,
    autoId: (col) => col.primaryKey().autoIncrement(),
    orderableText: (column) => sql`${sql.ref(column)}`,
    lockForClaim: (qb) => qb,
    search: sqliteSearch,
    ...(file === ":memory:" || !searchGate ? {} : { runSearch: (req) => (pool ??= sqliteSearchPool(file, searchGate)).search(req) }),
    ...(file === ":memory:" ? {} : {
      writeStatistics: (batch, sweepBefore) =>
        closed ? Promise.reject(new Error("the store is closed")) : (statsWriter ??= sqliteStatsWriter(file)).write(batch, sweepBefore),
    }),
    documentsVersionTriggers: () =>
      (
        [
          ["insert", "new"],
          ["update", "new"],
          ["delete", "old"],
        ] as const
      ).map(
        ([event, row]) =>
          `create trigger documents_version_${event} after ${event} on documents for each row begin ` +
          `update accounts set documents_version = documents_version + 1 where id = ${row}.account_id; end`,
      ),
    // Undefined until Kysely has opened the connection (on the first query).
    changeEpoch: async () => epoch?.current(),
    // Locked past busy_timeout, or its disk full: both pass.
    isUnavailable: (err) => ["SQLITE_BUSY", "SQLITE_FULL"].includes(String((err as { code?: unknown } | null)?.code)),
    isUniqueViolation: (err) => UNIQUE_VIOLATIONS.has((err as { code?: unknown } | null)?.code),
    watchQueuedJobs: (onQueued, log) => sqliteJobWakeups(file, log).watchQueuedJobs(onQueued),
    close: async () => {
      closed = true;
      await pool?.close();
      await statsWriter?.close();
      await db.destroy();
    },
  };
}
