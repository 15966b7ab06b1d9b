import { randomBytes } from "node:crypto";
import { Migrator, sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, type Migration } from "kysely";
import type { StoreDialect } from "./dialects/dialect.ts";
import { backfillSearch } from "./search-backfill.ts";

/** Whether a table has a column (so a migration adding it may run again). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function hasColumn(db: Kysely<any>, table: string, column: string): Promise<boolean> {
  const tables = await db.introspection.getTables();
  return tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
}

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
    "0006_app_sessions": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // The web app's sign-in (decisions §13): a memory-hard hash, null until a password is set.
        await db.schema.alterTable("accounts").addColumn("password_hash", "text").execute();
        // Sessions live here, so signing out (or a new password) really ends them. The id is kept
        // hashed: whoever reads the table cannot take over a session with what they read.
        await db.schema
          .createTable("app_sessions")
          .addColumn("id_hash", "text", (c) => c.primaryKey())
          .addColumn("account_id", "integer", (c) => c.references("accounts.id").onDelete("cascade"))
          .addColumn("data", "text", (c) => c.notNull())
          .addColumn("expires_at", "bigint", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema.createIndex("app_sessions_account").on("app_sessions").column("account_id").execute();
        await db.schema.createIndex("app_sessions_expiry").on("app_sessions").column("expires_at").execute();
        // The key that signs session cookies, one per database so every process sharing it agrees.
        await db.schema
          .createTable("app_secrets")
          .addColumn("name", "text", (c) => c.primaryKey())
          .addColumn("value", "text", (c) => c.notNull())
          .execute();
        await db.insertInto("app_secrets").values({ name: "session_cookie", value: randomBytes(32).toString("base64url") }).execute();
        // The documents page (and svc.documents.list) sorts an account's documents by publish date, ties
        // by documentId, one page at a time: with both in the index, no sort of the whole account.
        const tieBreak = dialect.name === "postgres" ? `document_id collate "C"` : "document_id";
        await sql.raw(`create index documents_account_publish on documents (account_id, publish_date, ${tieBreak})`).execute(db);
        },
      },
    "0007_search": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // The full-text index (decisions §11), filled with every document's title, tags and description.
        await dialect.search.migrate(db);
        await backfillSearch(db, dialect);
        },
      },
    "0008_webhooks": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // decisions §12: one webhook per account, and its deliveries (kept after their document is deleted).
        await db.schema
          .createTable("webhooks")
          .addColumn("account_id", "integer", (c) => c.primaryKey().references("accounts.id").onDelete("cascade"))
          .addColumn("url", "text", (c) => c.notNull())
          .addColumn("events", "text", (c) => c.notNull())
          .addColumn("secret", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("webhook_deliveries")
          .addColumn("id", "integer", (c) => dialect.autoId(c))
          .addColumn("delivery_id", "text", (c) => c.notNull().unique())
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("document_id", "text", (c) => c.notNull())
          .addColumn("event", "text", (c) => c.notNull())
          .addColumn("body", "text", (c) => c.notNull())
          .addColumn("status", "text", (c) => c.notNull())
          .addColumn("attempts", "integer", (c) => c.notNull())
          .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
          .addColumn("lease_owner", "text")
          .addColumn("lease_until", "bigint")
          .addColumn("last_error", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("delivered_at", "bigint")
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        // The head of a document's queue (its oldest pending delivery), and an account's history, newest first.
        await db.schema.createIndex("webhook_deliveries_document").on("webhook_deliveries").columns(["document_id", "status", "id"]).execute();
        await db.schema.createIndex("webhook_deliveries_account").on("webhook_deliveries").columns(["account_id", "id"]).execute();
        await db.schema.createIndex("webhook_deliveries_pending").on("webhook_deliveries").columns(["status", "next_attempt_at"]).execute();
        },
      },
    "0009_page_ranges": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // A document split into page-range jobs (src/jobs/convert-pages.ts): what every range needs
        // to know, and how many ranges are still at work. Gone with the document.
        await db.schema
          .createTable("page_fanouts")
          .addColumn("document_id", "text", (c) => c.primaryKey().references("documents.document_id").onDelete("cascade"))
          .addColumn("page_count", "integer", (c) => c.notNull())
          .addColumn("ranges_left", "integer", (c) => c.notNull())
          .addColumn("pdf_key", "text", (c) => c.notNull())
          .addColumn("text_layer_is_ours", "integer", (c) => c.notNull())
          .addColumn("cover_width", "integer", (c) => c.notNull())
          .addColumn("cover_height", "integer", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        // One row per range: its job, the pages of it already stored (the "being processed" page's
        // figure), and whether it is done (set once: a range counts towards the document once).
        await db.schema
          .createTable("page_ranges")
          .addColumn("document_id", "text", (c) => c.notNull().references("page_fanouts.document_id").onDelete("cascade"))
          .addColumn("first_page", "integer", (c) => c.notNull())
          .addColumn("last_page", "integer", (c) => c.notNull())
          .addColumn("job_id", "integer", (c) => c.notNull().unique())
          .addColumn("pages_ready", "integer", (c) => c.notNull())
          .addColumn("done", "integer", (c) => c.notNull())
          .addPrimaryKeyConstraint("page_ranges_pk", ["document_id", "first_page"])
          .execute();
      },
    },
    "0010_jobs_notify": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Wakes idle workers as soon as a job is queued (src/store/dialects/postgres-job-wakeups.ts
        // listens). Once per statement: a split's many range jobs make one wake-up, and NOTIFY is
        // sent at commit, when the jobs can be claimed. SQLite's workers watch the file instead.
        if (dialect.name !== "postgres") return;
        await sql
          .raw(
            `create function notify_jobs_queued() returns trigger language plpgsql as $$
             begin
               perform pg_notify('quire_jobs', '');
               return null;
             end $$`,
          )
          .execute(db);
        await sql.raw(`create trigger jobs_queued after insert on jobs for each statement execute function notify_jobs_queued()`).execute(db);
      },
    },
    "0011_index_old_text": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Documents published before 0007 were indexed by title, tags and description only: their
        // text is in the blob store, which only a worker reads. One job each puts it in the index
        // (src/jobs/index-text.ts); a document whose text is there already is skipped cheaply.
        const now = Date.now();
        await db
          .insertInto("jobs")
          .columns(["kind", "document_id", "account_id", "state", "attempts", "run_at", "last_error", "created_at", "updated_at"])
          .expression(
            db
              .selectFrom("documents")
              .select([
                sql.lit("index-text").as("kind"), "document_id", "account_id", sql.lit("queued").as("state"), sql.lit(0).as("attempts"),
                sql.lit(now).as("run_at"), sql.lit("").as("last_error"), sql.lit(now).as("created_at"), sql.lit(now).as("updated_at"),
              ])
              .where("state", "=", "A")
              .where("page_count", ">", 0),
          )
          .execute();
      },
    },
    "0012_search_pairs": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Words and pairs of words under their own indexes, each document's scope beside them, so
        // common words and phrases stay fast at a million pages (src/store/dialects/*-search.ts):
        // an index 0007 made is rebuilt from what it holds.
        await dialect.search.upgrade(db);
      },
    },
    "0013_statistics": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Readership statistics (decisions §15). A returning reader is recognised within a day by a
        // hash under that day's salt (src/domain/reader-identity.ts): one row per UTC day, deleted
        // once the day is over, so no key can be recomputed from an address afterwards.
        await db.schema
          .createTable("daily_salts")
          .addColumn("day", "text", (c) => c.primaryKey())
          .addColumn("salt", "text", (c) => c.notNull())
          .execute();
        // Every figure per document and UTC day (src/store/statistics.ts): a year of an account is
        // a few hundred thousand small rows at most, however many events made them. Each table goes
        // with its document (deleting a document deletes its statistics).
        const documentRef = (c: ColumnDefinitionBuilder) => c.notNull().references("documents.document_id").onDelete("cascade");
        const figures = ["impressions", "views", "embedded_views", "reads", "read_seconds", "downloads", "shares", "clicks"];
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const withFigures = (t: CreateTableBuilder<any, any>) => figures.reduce((b, f) => b.addColumn(f, "bigint", (c) => c.notNull()), t);
        await withFigures(
          db.schema
            .createTable("stat_days")
            .addColumn("document_id", "text", documentRef)
            .addColumn("day", "text", (c) => c.notNull())
            .addColumn("account_id", "integer", (c) => c.notNull()),
        )
          .addPrimaryKeyConstraint("stat_days_pk", ["document_id", "day"])
          .execute();
        // The depth curve: how many of a day's readers got no further than each page.
        await db.schema
          .createTable("stat_pages")
          .addColumn("document_id", "text", documentRef)
          .addColumn("day", "text", (c) => c.notNull())
          .addColumn("page", "integer", (c) => c.notNull())
          .addColumn("readers", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("stat_pages_pk", ["document_id", "day", "page"])
          .execute();
        // Where views came from: the referring site's host only, and whether it was an embed.
        await db.schema
          .createTable("stat_referrers")
          .addColumn("document_id", "text", documentRef)
          .addColumn("day", "text", (c) => c.notNull())
          .addColumn("host", "text", (c) => c.notNull())
          .addColumn("embedded", "integer", (c) => c.notNull())
          .addColumn("account_id", "integer", (c) => c.notNull())
          .addColumn("views", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("stat_referrers_pk", ["document_id", "day", "host", "embedded"])
          .execute();
        await db.schema.createIndex("stat_referrers_account").on("stat_referrers").columns(["account_id", "day"]).execute();
        // Today's readers, by their key under today's salt only: what each has been counted for
        // already, so a reader is one reader however often they come back that day. Deleted with the salt.
        await db.schema
          .createTable("stat_readers")
          .addColumn("day", "text", (c) => c.notNull())
          .addColumn("reader_key", "text", (c) => c.notNull())
          .addColumn("document_id", "text", documentRef)
          .addColumn("first_at", "bigint", (c) => c.notNull())
          .addColumn("last_at", "bigint", (c) => c.notNull())
          .addColumn("viewed", "integer", (c) => c.notNull())
          .addColumn("read", "integer", (c) => c.notNull())
          .addColumn("downloaded", "integer", (c) => c.notNull())
          .addColumn("max_page", "integer", (c) => c.notNull())
          .addColumn("seconds", "integer", (c) => c.notNull())
          .addColumn("shares", "integer", (c) => c.notNull())
          .addColumn("clicks", "integer", (c) => c.notNull())
          .addColumn("newcomers", "integer", (c) => c.notNull())
          .addPrimaryKeyConstraint("stat_readers_pk", ["day", "reader_key"])
          .execute();
        await db.schema.createIndex("stat_readers_document").on("stat_readers").column("document_id").execute();
        // The account's pages read these instead of summing a year of every document's rows: the
        // account's days and referrers, and each document's months (for top documents over long
        // periods). Rows of a deleted document leave the account's by the triggers below.
        await withFigures(
          db.schema
            .createTable("stat_account_days")
            .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
            .addColumn("day", "text", (c) => c.notNull()),
        )
          .addPrimaryKeyConstraint("stat_account_days_pk", ["account_id", "day"])
          .execute();
        await db.schema
          .createTable("stat_account_referrers")
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("day", "text", (c) => c.notNull())
          .addColumn("host", "text", (c) => c.notNull())
          .addColumn("embedded", "integer", (c) => c.notNull())
          .addColumn("views", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("stat_account_referrers_pk", ["account_id", "day", "host", "embedded"])
          .execute();
        await db.schema
          .createTable("stat_months")
          .addColumn("document_id", "text", documentRef)
          .addColumn("month", "text", (c) => c.notNull())
          .addColumn("account_id", "integer", (c) => c.notNull())
          .addColumn("impressions", "bigint", (c) => c.notNull())
          .addColumn("views", "bigint", (c) => c.notNull())
          .addColumn("reads", "bigint", (c) => c.notNull())
          .addColumn("read_seconds", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("stat_months_pk", ["document_id", "month"])
          .execute();
        await db.schema
          .createIndex("stat_months_account")
          .on("stat_months")
          .columns(["account_id", "month", "document_id", "views", "reads", "read_seconds", "impressions"])
          .execute();
        const subtractDay = `update stat_account_days set ${figures.map((f) => `${f} = ${f} - old.${f}`).join(", ")}
           where account_id = old.account_id and day = old.day`;
        const subtractReferrer = `update stat_account_referrers set views = views - old.views
           where account_id = old.account_id and day = old.day and host = old.host and embedded = old.embedded`;
        if (dialect.name === "postgres") {
          for (const [name, table, body] of [["stat_days_leave", "stat_days", subtractDay], ["stat_referrers_leave", "stat_referrers", subtractReferrer]]) {
            await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${body}; return null; end $$`).execute(db);
            await sql.raw(`create trigger ${name} after delete on ${table} for each row execute function ${name}()`).execute(db);
          }
        } else {
          await sql.raw(`create trigger stat_days_leave after delete on stat_days for each row begin ${subtractDay}; end`).execute(db);
          await sql.raw(`create trigger stat_referrers_leave after delete on stat_referrers for each row begin ${subtractReferrer}; end`).execute(db);
        }
      },
    },
    "0014_comments_ratings": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // decisions §16: ratings and comments (src/store/document-ratings.ts, document-comments.ts).
        // A document's rating counts live on its row, so every document answer reads them with the
        // record and a new rating moves the account's documents_version (cached lists stay true);
        // comments_version moves whenever the approved comments a reader sees change (the reader
        // page's cache key holds the record).
        for (const n of [1, 2, 3, 4, 5]) {
          await db.schema.alterTable("documents").addColumn(`stars${n}`, "integer", (c) => c.notNull().defaultTo(0)).execute();
        }
        await db.schema.alterTable("documents").addColumn("comments_version", "integer", (c) => c.notNull().defaultTo(0)).execute();
        // How many are approved: the reader shows the figure without counting 10,000 rows.
        await db.schema.alterTable("documents").addColumn("comments_shown", "integer", (c) => c.notNull().defaultTo(0)).execute();
        // The account's choice: new comments published at once (1) or held for approval (0, the default).
        await db.schema.alterTable("accounts").addColumn("publish_comments", "integer", (c) => c.notNull().defaultTo(0)).execute();
        // One row per reader, document and UTC day: the reader is the daily-salted key of §15.
        await db.schema
          .createTable("document_ratings")
          .addColumn("document_id", "text", (c) => c.notNull().references("documents.document_id").onDelete("cascade"))
          .addColumn("day", "text", (c) => c.notNull())
          .addColumn("reader_key", "text", (c) => c.notNull())
          .addColumn("stars", "integer", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("document_ratings_pk", ["document_id", "day", "reader_key"])
          .execute();
        await db.schema
          .createTable("document_comments")
          .addColumn("comment_id", "text", (c) => c.primaryKey())
          .addColumn("document_id", "text", (c) => c.notNull().references("documents.document_id").onDelete("cascade"))
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("author", "text", (c) => c.notNull())
          .addColumn("body", "text", (c) => c.notNull())
          .addColumn("state", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        // Under the reader: a document's approved ones, newest first, a page at a time. In the app
        // and svc.document_comments.list: an account's (or a document's) by state and time.
        await db.schema.createIndex("document_comments_document").on("document_comments").columns(["document_id", "state", "created_at", "comment_id"]).execute();
        await db.schema.createIndex("document_comments_account").on("document_comments").columns(["account_id", "state", "created_at", "comment_id"]).execute();
      },
    },
    "0015_v2": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Safe to run again (as the tests of older migrations do, re-running all from theirs on).
        // The v2 API (decisions §14): bearer tokens, stored as the SHA-256 of the token only.
        await db.schema
          .createTable("api_tokens")
          .ifNotExists()
          .addColumn("token_hash", "text", (c) => c.primaryKey())
          .addColumn("prefix", "text", (c) => c.notNull())
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("last_used_at", "bigint")
          .execute();
        await db.schema.createIndex("api_tokens_account").ifNotExists().on("api_tokens").column("account_id").execute();
        // A v2 draft is a document not published yet: never public, never in v1 lists.
        if (!(await hasColumn(db, "documents", "draft"))) {
          await db.schema.alterTable("documents").addColumn("draft", "integer", (c) => c.notNull().defaultTo(0)).execute();
        }
        // What only v2 knows of a document: its v2 fields, the edits staged until the next publish, a scheduled publish.
        await db.schema
          .createTable("document_v2")
          .ifNotExists()
          .addColumn("document_id", "text", (c) => c.primaryKey().references("documents.document_id").onDelete("cascade"))
          .addColumn("info", "text", (c) => c.notNull())
          .addColumn("changes", "text")
          .addColumn("scheduled_at", "bigint")
          .execute();
        // Stacks are folders; v2 gives them an access type.
        if (!(await hasColumn(db, "folders", "access_type"))) {
          await db.schema.alterTable("folders").addColumn("access_type", "text", (c) => c.notNull().defaultTo("PUBLIC")).execute();
        }
      },
    },
    "0016_document_replacements": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // A new file for a published document (issue 26 item 5), converted beside the pages readers
        // see until one guarded update switches the document to it. One per document: the newest wins.
        await db.schema
          .createTable("document_replacements")
          .ifNotExists()
          .addColumn("document_id", "text", (c) => c.primaryKey().references("documents.document_id").onDelete("cascade"))
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("blob_id", "text", (c) => c.notNull())
          .addColumn("job_id", "integer", (c) => c.notNull())
          .addColumn("origin", "text", (c) => c.notNull())
          .addColumn("org_doc_type", "text", (c) => c.notNull())
          .addColumn("org_doc_name", "text", (c) => c.notNull())
          .addColumn("slurp_url", "text", (c) => c.notNull())
          .addColumn("original_size", "bigint", (c) => c.notNull())
          .addColumn("state", "text", (c) => c.notNull())
          .addColumn("error_code", "integer", (c) => c.notNull())
          .addColumn("error_message", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        // The orphan clean-up asks which blob folders a record owns.
        await db.schema.createIndex("document_replacements_blob").ifNotExists().on("document_replacements").column("blob_id").execute();
      },
    },
    "0017_document_old_names": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // A renamed document's earlier names (issue 26 item 4): their addresses redirect to it for
        // good, unless another document of the account takes the name. Gone with the document.
        await db.schema
          .createTable("document_old_names")
          .ifNotExists()
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("document_id", "text", (c) => c.notNull().references("documents.document_id").onDelete("cascade"))
          .addColumn("renamed_at", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("document_old_names_pk", ["account_id", "name"])
          .execute();
        await db.schema.createIndex("document_old_names_document").ifNotExists().on("document_old_names").column("document_id").execute();
      },
    },
    "0018_app_ux": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Issue 26 item 9. The content's SHA-256 of files uploaded through the app, so the same file
        // uploaded again can say "already uploaded as …" (a hint, never a refusal). Goes with its document.
        await db.schema
          .createTable("upload_checksums")
          .ifNotExists()
          .addColumn("document_id", "text", (c) => c.primaryKey().references("documents.document_id").onDelete("cascade"))
          .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
          .addColumn("sha256", "text", (c) => c.notNull())
          .execute();
        await db.schema.createIndex("upload_checksums_account").ifNotExists().on("upload_checksums").columns(["account_id", "sha256"]).execute();
        // A name the publisher gives an API key (which program uses it); empty for older keys.
        if (!(await hasColumn(db, "api_keys", "label"))) {
          await db.schema.alterTable("api_keys").addColumn("label", "text", (c) => c.notNull().defaultTo("")).execute();
        }
      },
    },
    "0019_folders_on_profile": {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async up(db: Kysely<any>) {
        // Issue 26 item 9: whether a folder is shown on its owner's public profile. Off for every
        // folder made before (their names were never public, whatever v2's access_type said) and by
        // default; the guard keeps a publisher's choices when the migration runs again.
        if (!(await hasColumn(db, "folders", "on_profile"))) {
          await db.schema.alterTable("folders").addColumn("on_profile", "integer", (c) => c.notNull().defaultTo(0)).execute();
        }
      },
    },
  };
}

export async function migrateToLatest(dialect: StoreDialect): Promise<void> {
  const migrator = new Migrator({
    db: dialect.db,
    provider: { getMigrations: async () => migrations(dialect) },
    // A migration missing from a database that has later ones is run rather than refused: a
    // database made by a branch that had fewer, or an upgrade test that runs one again.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ""}: ${String(error)}`);
  }
}
