import { CamelCasePlugin, Kysely, sql, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "../schema.ts";
import type { StoreDialect } from "./dialect.ts";
import { postgresSearch } from "./postgres-search.ts";

const INT8_OID = 20;

/** SQLSTATE unique_violation, for primary keys and unique indexes alike. */
const UNIQUE_VIOLATION = "23505";

export function openPostgres(url: string, poolSize = 10): StoreDialect {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Epoch milliseconds live in bigint columns; they fit a double exactly, so answer numbers, not strings.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
    },
  });
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
    close: () => db.destroy(),
  };
}
