import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { CamelCasePlugin, Kysely, sql, SqliteDialect } from "kysely";
import type { Database } from "../schema.ts";
import type { StoreDialect } from "./dialect.ts";

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
        return conn;
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
