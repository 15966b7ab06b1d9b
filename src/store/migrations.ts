import { Migrator, sql, type Kysely, type Migration } from "kysely";
import type { StoreDialect } from "./dialects/dialect.ts";

/** One schema for both dialects; times are epoch ms in bigint, booleans 0/1 integers. */
function migrations(dialect: StoreDialect): Record<string, Migration> {
  return {
    "0001_initial": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        await db.schema
          .createTable("accounts")
          .addColumn("id", "integer", (c) => dialect.autoId(c))
          .addColumn("username", "text", (c) => c.notNull().unique())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("api_keys")
          .addColumn("api_key", "text", (c) => c.primaryKey())
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("api_secret", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("revoked_at", "bigint")
          .execute();
        await db.schema.createIndex("api_keys_account").on("api_keys").column("account_id").execute();
        await db.schema
          .createTable("documents")
          .addColumn("document_id", "text", (c) => c.primaryKey())
          .addColumn("revision_id", "text", (c) => c.notNull())
          .addColumn("publication_id", "text", (c) => c.notNull())
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("name_given", "integer", (c) => c.notNull())
          .addColumn("title", "text", (c) => c.notNull())
          .addColumn("description", "text", (c) => c.notNull())
          .addColumn("description_given", "integer", (c) => c.notNull())
          .addColumn("access", "text", (c) => c.notNull())
          .addColumn("state", "text", (c) => c.notNull())
          .addColumn("category", "text", (c) => c.notNull())
          .addColumn("type", "text", (c) => c.notNull())
          .addColumn("language", "text", (c) => c.notNull())
          .addColumn("org_doc_type", "text", (c) => c.notNull())
          .addColumn("org_doc_name", "text", (c) => c.notNull())
          .addColumn("origin", "text", (c) => c.notNull())
          .addColumn("page_count", "integer", (c) => c.notNull())
          .addColumn("publish_date", "bigint", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .addColumn("tags", "text", (c) => c.notNull())
          .addColumn("folder_ids", "text", (c) => c.notNull())
          .addColumn("comments_allowed", "integer", (c) => c.notNull())
          .addColumn("ratings_allowed", "integer", (c) => c.notNull())
          .addColumn("downloadable", "integer", (c) => c.notNull())
          .addColumn("explicit", "integer", (c) => c.notNull())
          .addColumn("info_link", "text", (c) => c.notNull())
          .addColumn("sound_url", "text", (c) => c.notNull())
          .addColumn("slurp_url", "text", (c) => c.notNull())
          .addColumn("cover_width", "integer", (c) => c.notNull())
          .addColumn("cover_height", "integer", (c) => c.notNull())
          .addColumn("error_code", "integer", (c) => c.notNull())
          .addColumn("error_message", "text", (c) => c.notNull())
          .addColumn("blob_id", "text", (c) => c.notNull().unique())
          .addColumn("original_size", "bigint", (c) => c.notNull())
          .addUniqueConstraint("documents_account_name", ["account_id", "name"])
          .execute();
        await db.schema
          .createTable("folders")
          .addColumn("folder_id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("description", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .addUniqueConstraint("folders_account_name", ["account_id", "name"])
          .execute();
        await db.schema
          .createTable("jobs")
          .addColumn("id", "integer", (c) => dialect.autoId(c))
          .addColumn("kind", "text", (c) => c.notNull())
          .addColumn("document_id", "text", (c) => c.notNull())
          .addColumn("state", "text", (c) => c.notNull())
          .addColumn("attempts", "integer", (c) => c.notNull())
          .addColumn("run_at", "bigint", (c) => c.notNull())
          .addColumn("lease_until", "bigint")
          .addColumn("lease_owner", "text")
          .addColumn("last_error", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema.createIndex("jobs_ready").on("jobs").columns(["state", "run_at"]).execute();
        await db.schema.createIndex("jobs_document").on("jobs").column("document_id").execute();
      },
    },
    "0002_bookmarks_embeds": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        await db.schema
          .createTable("bookmarks")
          .addColumn("bookmark_id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("document_id", "text", (c) => c.notNull().references("documents.document_id").onDelete("cascade"))
          .addColumn("title", "text", (c) => c.notNull())
          .addColumn("description", "text", (c) => c.notNull())
          .addColumn("page", "integer", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema.createIndex("bookmarks_account").on("bookmarks").column("account_id").execute();
        await db.schema.createIndex("bookmarks_document").on("bookmarks").column("document_id").execute();
        await db.schema
          .createTable("bookmark_folders")
          .addColumn("bookmark_id", "text", (c) => c.notNull().references("bookmarks.bookmark_id").onDelete("cascade"))
          .addColumn("folder_id", "text", (c) => c.notNull().references("folders.folder_id").onDelete("cascade"))
          .addColumn("added_at", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("bookmark_folders_pk", ["bookmark_id", "folder_id"])
          .execute();
        await db.schema.createIndex("bookmark_folders_folder").on("bookmark_folders").column("folder_id").execute();
        await db.schema
          .createTable("embeds")
          .addColumn("id", "integer", (c) => dialect.autoId(c))
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("document_id", "text", (c) => c.notNull().references("documents.document_id").onDelete("cascade"))
          .addColumn("reader_start_page", "integer", (c) => c.notNull())
          .addColumn("width", "integer", (c) => c.notNull())
          .addColumn("height", "integer", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema.createIndex("embeds_account").on("embeds").column("account_id").execute();
      },
    },
    "0003_documents_version": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Bumped by the database itself on every change to an account's documents, whoever makes
        // it (API, worker, another process): answers computed from those rows can be cached under it.
        await db.schema.alterTable("accounts").addColumn("documents_version", "bigint", (c) => c.notNull().defaultTo(0)).execute();
        for (const statement of dialect.documentsVersionTriggers()) await sql.raw(statement).execute(db);
      },
    },
    "0004_jobs_request_id": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // The id of the API request that enqueued the job, so the worker's log lines name it too.
        await db.schema.alterTable("jobs").addColumn("request_id", "text").execute();
      },
    },
    "0005_jobs_account": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Whose work a job is, so one account's queue cannot take every worker slot (claimNext).
        await db.schema.alterTable("jobs").addColumn("account_id", "integer", (c) => c.notNull().defaultTo(0)).execute();
        await sql`update jobs set account_id = coalesce((select d.account_id from documents d where d.document_id = jobs.document_id), 0)`.execute(db);
        // The claim walks the accounts with queued work, then takes each one's oldest due job and counts its running ones.
        await db.schema.createIndex("jobs_account_ready").on("jobs").columns(["state", "account_id", "run_at"]).execute();
      },
    },
  };
}

export async function migrateToLatest(dialect: StoreDialect): Promise<void> {
  const migrator = new Migrator({
    db: dialect.db,
    provider: { getMigrations: async () => migrations(dialect) },
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ""}: ${String(error)}`);
  }
}
