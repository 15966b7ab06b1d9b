import { sql, type Kysely } from "kysely";
import { SecretBox } from "../domain/secret-box.ts";
import { accountsRepo } from "./accounts.ts";
import { bookmarksRepo } from "./bookmarks.ts";
import type { StoreDialect } from "./dialects/dialect.ts";
import { documentsRepo } from "./documents.ts";
import { embedsRepo } from "./embeds.ts";
import { foldersRepo } from "./folders.ts";
import { jobsRepo } from "./jobs.ts";
import { migrateToLatest } from "./migrations.ts";
import type { Database } from "./schema.ts";

export interface Store {
  readonly dialect: "sqlite" | "postgres";
  /** For the store's own modules and tests that inspect tables; the rest of the app goes through the repos. */
  readonly db: Kysely<Database>;
  readonly accounts: ReturnType<typeof accountsRepo>;
  readonly documents: ReturnType<typeof documentsRepo>;
  readonly folders: ReturnType<typeof foldersRepo>;
  readonly bookmarks: ReturnType<typeof bookmarksRepo>;
  readonly embeds: ReturnType<typeof embedsRepo>;
  readonly jobs: ReturnType<typeof jobsRepo>;
  /** Throws unless the database answers now (for /readyz): one round trip, no table read. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** `postgres://…` / `postgresql://…` selects PostgreSQL; anything else is a SQLite file path (or `sqlite:path`). */
export async function openDialect(databaseUrl: string): Promise<StoreDialect> {
  // Only the driver in use is loaded: every process start (CLI included) pays for what it imports.
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return (await import("./dialects/postgres.ts")).openPostgres(databaseUrl);
  return (await import("./dialects/sqlite.ts")).openSqlite(databaseUrl.replace(/^sqlite:(\/\/)?/, ""));
}

/** `secretKeys` (QUIRE_SECRET_KEY) seal apiSecrets at rest; without them secrets are stored as they are. */
export async function openStore(databaseUrl: string, opts: { secretKeys?: readonly Buffer[] } = {}): Promise<Store> {
  const dialect = await openDialect(databaseUrl);
  try {
    await migrateToLatest(dialect);
  } catch (err) {
    await dialect.close();
    throw err;
  }
  const { db } = dialect;
  return {
    dialect: dialect.name,
    db,
    accounts: accountsRepo(db, new SecretBox(opts.secretKeys ?? []), dialect.changeEpoch?.bind(dialect)),
    documents: documentsRepo(db, dialect),
    folders: foldersRepo(db),
    bookmarks: bookmarksRepo(db),
    embeds: embedsRepo(db),
    jobs: jobsRepo(db, dialect),
    ping: async () => void (await sql`select 1`.execute(db)),
    close: () => dialect.close(),
  };
}
