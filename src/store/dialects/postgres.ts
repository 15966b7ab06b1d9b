import { CamelCasePlugin, Kysely, sql, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "../schema.ts";
import type { StoreDialect } from "./dialect.ts";
import { postgresJobWakeups } from "./postgres-job-wakeups.ts";
import { postgresSearch } from "./postgres-search.ts";

const INT8_OID = 20;

/** SQLSTATE unique_violation, for primary keys and unique indexes alike. */
const UNIQUE_VIOLATION = "23505";

/**
 * Connection failures (the socket's codes; SQLSTATE class 08), the server shutting down or
 * starting (57P01–57P03), out of disk or connections (53100, 53300), a read-only server (25006),
 * and node-postgres' own words when a connection ends or cannot be had in time.
 */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "57P01", "57P02", "57P03", "53100", "53300", "25006"]);
const UNAVAILABLE_WORDS = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated unexpectedly)/;

function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  if (UNAVAILABLE_CODES.has(code) || code.startsWith("08")) return true;
  if (err instanceof AggregateError) return err.errors.some(isUnavailable);
  return typeof e?.message === "string" && UNAVAILABLE_WORDS.test(e.message);
}

export function openPostgres(url: string, poolSize = 10): StoreDialect {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // While the database is unreachable a request waits this long at most for a connection, then fails.
    connectionTimeoutMillis: 5_000,
    // Epoch milliseconds live in bigint columns; they fit a double exactly, so answer numbers, not strings.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
    },
  });
  // A connection the server drops (a restart, an outage) emits 'error' on its client: idle ones
  // through the pool, checked-out ones on the client itself. Unheard, either ends the process. The
  // query in flight fails on its own and its caller answers or retries; the pool discards the
  // broken client and connects anew when the database is back, so nothing more is needed here.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [new CamelCasePlugin()] });
  return {
    name: "postgres",
    db,
    autoId: (col) => col.primaryKey().generatedByDefaultAsIdentity(),
    orderableText: (column) => sql`${sql.ref(column)} collate "C"`,
    lockForClaim: (qb) => qb.forUpdate().skipLocked() as typeof qb,
    search: postgresSearch,
    documentsVersionTriggers: () => [
      `create function bump_documents_version() returns trigger language plpgsql as $$
       begin
         update accounts set documents_version = documents_version + 1
          where id = case when tg_op = 'DELETE' then old.account_id else new.account_id end;
         return null;
       end $$`,
      `create trigger documents_version after insert or update or delete on documents
       for each row execute function bump_documents_version()`,
    ],
    isUniqueViolation: (err) => (err as { code?: unknown } | null)?.code === UNIQUE_VIOLATION,
    isUnavailable,
    watchQueuedJobs: (onQueued, log) => postgresJobWakeups(url, log).watchQueuedJobs(onQueued),
    close: () => db.destroy(),
  };
}
