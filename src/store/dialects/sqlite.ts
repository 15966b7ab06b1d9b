import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { CamelCasePlugin, Kysely, sql, SqliteDialect } from "kysely";
import type { Database } from "../schema.ts";
import type { StoreDialect } from "./dialect.ts";

/** Distinct SQL texts the app runs are a few hundred at most; more would mean ad-hoc SQL. */
const CACHED_STATEMENTS = 500;

/**
 * Kysely prepares every query it runs, and better-sqlite3 compiles the SQL on each prepare: for
 * the small queries of the request path that costs more than running them. The connection is
 * used by one query at a time (Kysely holds it for the whole of a streamed query too), so a
 * statement is never run twice at once.
 */
function withStatementCache(conn: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = conn.prepare.bind(conn);
  conn.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      if (cache.size >= CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof conn.prepare;
  return conn;
}

export function openSqlite(file: string): StoreDialect {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({
      database: async () => {
        const conn = new SQLite(file);
        // WAL lets readers (the reader pages, `quire accounts list`) run beside a writing server.
        conn.pragma("journal_mode = WAL");
        conn.pragma("synchronous = NORMAL");
        conn.pragma("foreign_keys = ON");
        conn.pragma("busy_timeout = 5000");
        return withStatementCache(conn);
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
    close: () => db.destroy(),
  };
}
