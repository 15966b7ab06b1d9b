/**
 * The statistics writer thread (sqlite-stats-writer.ts): its own read-write connection to the
 * database file, on which the counter's batches are written one at a time, as the main thread
 * sends them. Only the statistics tables (and the day's salts and readers) are written here.
 */
import { parentPort, workerData } from "node:worker_threads";
import SQLite from "better-sqlite3";
import { CamelCasePlugin, Kysely, SqliteDialect } from "kysely";
import type { Database } from "../schema.ts";
import { statisticsRepo } from "../statistics.ts";
import { withStatementCache } from "./sqlite.ts";
import { unpackStatEvents, type StatsAnswer, type StatsTask } from "./sqlite-stats-messages.ts";

const { file } = workerData as { file: string };
const conn = new SQLite(file, { fileMustExist: true });
// As the main connection (sqlite.ts): the same journal, durability and lock wait.
conn.pragma("journal_mode = WAL");
conn.pragma("synchronous = NORMAL");
conn.pragma("foreign_keys = ON");
conn.pragma("busy_timeout = 5000");
const nothing = () => undefined;
const db = new Kysely<Database>({
  dialect: new SqliteDialect({ database: withStatementCache(conn, { noteWrite: nothing, noteIterationStarted: nothing, noteIterationEnded: nothing }) }),
  plugins: [new CamelCasePlugin()],
});
const statistics = statisticsRepo(db, "sqlite");

parentPort!.on("message", (task: StatsTask) => {
  statistics.recordAndSweep(unpackStatEvents(task.events), task.sweepBefore).then(
    (counted) => parentPort!.postMessage({ id: task.id, ok: true, counted } satisfies StatsAnswer),
    (err: unknown) => {
      const e = err as { message?: unknown; code?: unknown };
      parentPort!.postMessage({ id: task.id, ok: false, message: String(e?.message ?? err), code: typeof e?.code === "string" ? e.code : undefined } satisfies StatsAnswer);
    },
  );
});
