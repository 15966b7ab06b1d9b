import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { SecretBox } from "../domain/secret-box.ts";
import { accountsRepo } from "./accounts.ts";
import { apiTokensRepo } from "./api-tokens.ts";
import { documentV2Repo } from "./document-v2.ts";
import { documentReplacementsRepo } from "./document-replacements.ts";
import { blobReferencesRepo } from "./blob-references.ts";
import { appSessionsRepo } from "./app-sessions.ts";
import { bookmarksRepo } from "./bookmarks.ts";
import { dailySaltsRepo } from "./daily-salts.ts";
import type { StoreDialect, WakeupLog } from "./dialects/dialect.ts";
import { documentsRepo } from "./documents.ts";
import { documentCommentsRepo } from "./document-comments.ts";
import { documentRatingsRepo } from "./document-ratings.ts";
import { embedsRepo } from "./embeds.ts";
import { foldersRepo } from "./folders.ts";
import { jobsRepo } from "./jobs.ts";
import { migrateToLatest } from "./migrations.ts";
import { webhookDeliveriesRepo } from "./webhook-deliveries.ts";
import { webhooksRepo } from "./webhooks.ts";
import { uploadChecksumsRepo } from "./upload-checksums.ts";
import { pageRangesRepo } from "./page-ranges.ts";
import { publicPagesRepo } from "./public-pages.ts";
import { DEFAULT_SEARCH_LIMITS, SearchGate, type SearchLimits } from "./search-gate.ts";
import { searchIndex } from "./search-index.ts";
import { statisticsRepo } from "./statistics.ts";
import { attachDatabase } from "./store-handle.ts";

export interface Store {
  readonly dialect: "sqlite" | "postgres";
  readonly accounts: ReturnType<typeof accountsRepo>;
  readonly documents: ReturnType<typeof documentsRepo>;
  readonly folders: ReturnType<typeof foldersRepo>;
  readonly bookmarks: ReturnType<typeof bookmarksRepo>;
  readonly embeds: ReturnType<typeof embedsRepo>;
  readonly jobs: ReturnType<typeof jobsRepo>;
  readonly webhooks: ReturnType<typeof webhooksRepo>;
  readonly webhookDeliveries: ReturnType<typeof webhookDeliveriesRepo>;
  /** Full-text search over documents (decisions §11); the index itself is written by `documents`. */
  readonly search: Pick<ReturnType<typeof searchIndex>, "search" | "load">;
  /** Documents split into page-range jobs, and how far they are. */
  readonly pageRanges: ReturnType<typeof pageRangesRepo>;
  /** The reads of the public web pages. */
  readonly publicPages: ReturnType<typeof publicPagesRepo>;
  /** Which blob folders a record still owns, for the orphan clean-up. */
  readonly blobReferences: ReturnType<typeof blobReferencesRepo>;
  /** The web app's sessions (migration 0006). */
  readonly appSessions: ReturnType<typeof appSessionsRepo>;
  /** Whether an error is the database being unusable for now (see StoreDialect.isUnavailable). */
  isUnavailable(err: unknown): boolean;
  /** Readers' comments and ratings (decisions §16, migration 0014). */
  readonly comments: ReturnType<typeof documentCommentsRepo>;
  readonly ratings: ReturnType<typeof documentRatingsRepo>;
  /** v2 bearer tokens (migration 0015). */
  readonly apiTokens: ReturnType<typeof apiTokensRepo>;
  /** Content hashes of app uploads (migration 0017): "already uploaded as …". */
  readonly uploadChecksums: ReturnType<typeof uploadChecksumsRepo>;
  /** What only v2 knows of documents, and stacks' access types (migration 0015). */
  readonly documentV2: ReturnType<typeof documentV2Repo>;
  /** A published document's new file, converting beside its pages (migration 0016). */
  readonly replacements: ReturnType<typeof documentReplacementsRepo>;
  /** The daily salt of reader recognition and "the reader key" a route asks for (decisions §15, migration 0013). */
  readonly dailySalts: ReturnType<typeof dailySaltsRepo>;
  /**
   * Hears of jobs queued by any process, through the dialect (PostgreSQL LISTEN, SQLite's file
   * changes), so idle workers claim them at once; resolves with the function that stops it.
   */
  watchQueuedJobs(onQueued: () => void, log?: WakeupLog): Promise<() => Promise<void>>;
  /** Readership statistics (decisions §15): counted events in, reports out. */
  readonly statistics: ReturnType<typeof statisticsRepo>;
  /** Throws unless the database answers now (for /readyz): one round trip, no table read. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** `postgres://…` / `postgresql://…` selects PostgreSQL; anything else is a SQLite file path (or `sqlite:path`). */
export async function openDialect(databaseUrl: string, searchGate?: SearchGate): Promise<StoreDialect> {
  // Only the driver in use is loaded: every process start (CLI included) pays for what it imports.
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return (await import("./dialects/postgres.ts")).openPostgres(databaseUrl);
  return (await import("./dialects/sqlite.ts")).openSqlite(databaseUrl.replace(/^sqlite:(\/\/)?/, ""), searchGate);
}

export interface OpenStoreOptions {
  secretKeys?: readonly Buffer[];
  /** QUIRE_SEARCH_CONCURRENCY, QUIRE_SEARCH_QUEUE: the searches running and waiting at once. */
  searchLimits?: SearchLimits;
  /**
   * Given, a database that cannot be reached yet is waited for (told each time it is tried again)
   * instead of failing the start: a process started during an outage comes up when it ends.
   */
  onUnavailable?: (err: unknown, attempt: number) => void;
}

const REACH_RETRY_MAX_MS = 15_000;

async function waitUntilReachable(dialect: StoreDialect, onUnavailable: NonNullable<OpenStoreOptions["onUnavailable"]>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`select 1`.execute(dialect.db);
      return;
    } catch (err) {
      if (!dialect.isUnavailable(err)) throw err;
      onUnavailable(err, attempt);
      await sleep(Math.min(500 * 2 ** (attempt - 1), REACH_RETRY_MAX_MS));
    }
  }
}

/** `secretKeys` (QUIRE_SECRET_KEY) seal apiSecrets and webhook secrets at rest; without them secrets are stored as they are. */
export async function openStore(databaseUrl: string, opts: OpenStoreOptions = {}): Promise<Store> {
  const searchGate = new SearchGate(opts.searchLimits ?? DEFAULT_SEARCH_LIMITS);
  const dialect = await openDialect(databaseUrl, searchGate);
  try {
    if (opts.onUnavailable) await waitUntilReachable(dialect, opts.onUnavailable);
    await migrateToLatest(dialect);
  } catch (err) {
    await dialect.close();
    throw err;
  }
  const { db } = dialect;
  const secrets = new SecretBox(opts.secretKeys ?? []);
  // The handle stays off the type: tests reach it through store-handle.ts, the app never.
  return attachDatabase<Store>({
    dialect: dialect.name,
    accounts: accountsRepo(db, secrets, dialect.changeEpoch?.bind(dialect)),
    documents: documentsRepo(db, dialect),
    folders: foldersRepo(db, dialect),
    bookmarks: bookmarksRepo(db),
    embeds: embedsRepo(db),
    jobs: jobsRepo(db, dialect),
    webhooks: webhooksRepo(db, secrets),
    webhookDeliveries: webhookDeliveriesRepo(db),
    search: searchIndex(db, dialect.search, dialect.runSearch?.bind(dialect), searchGate),
    pageRanges: pageRangesRepo(db),
    publicPages: publicPagesRepo(db, dialect.changeEpoch?.bind(dialect)),
    blobReferences: blobReferencesRepo(db),
    appSessions: appSessionsRepo(db),
    isUnavailable: (err) => dialect.isUnavailable(err),
    comments: documentCommentsRepo(db),
    ratings: documentRatingsRepo(db),
    apiTokens: apiTokensRepo(db, dialect.changeEpoch?.bind(dialect)),
    uploadChecksums: uploadChecksumsRepo(db),
    documentV2: documentV2Repo(db),
    replacements: documentReplacementsRepo(db, dialect),
    dailySalts: dailySaltsRepo(db),
    watchQueuedJobs: (onQueued, log) => dialect.watchQueuedJobs(onQueued, log),
    statistics: statisticsRepo(db, dialect.name, dialect.writeStatistics?.bind(dialect)),
    ping: async () => void (await sql`select 1`.execute(db)),
    close: () => dialect.close(),
  }, db);
}
