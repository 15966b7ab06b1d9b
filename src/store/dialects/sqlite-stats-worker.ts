/**
 * The statistics writer thread (sqlite-stats-writer.ts): its own read-write connection to the
 * database file, on which the counter's batches are written one at a time, as the main thread
 * sends them. Only the statistics tables (and the day's salts and readers) are written here.
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import SQLite from "better-sqlite3";
import { CamelCasePlugin, Kysely, SqliteDialect } from "kysely";
import type { Database } from "../schema.ts";
import { statisticsRepo } from "../statistics.ts";
import { withStatementCache } from "./sqlite.ts";
import type { StatsAnswer, StatsTask } from "./sqlite-stats-messages.ts";

const { file } = workerData as { file: string };

/**
 * This thread's nice value (Linux: a thread's own; /proc/thread-self names it). Counting is
 * background work: when the processors are busy, a batch should wait for the pages being served,
 * not they for it. At 10 the thread still gets about a tenth of what a busy request thread gets,
 * more than counting at full load needs (the kill test's one second). It did not remove the slow
 * requests that follow each batch's write at 2 connections (docs/statistics.md).
 */
const WRITER_NICE = 10;
try {
  setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), WRITER_NICE);
} catch {
  // No /proc (another system): the thread keeps the process's priority.
}
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
  statistics.recordAndSweep(task.events, task.sweepBefore).then(
    (counted) => parentPort!.postMessage({ id: task.id, ok: true, counted } satisfies StatsAnswer),
    (err: unknown) => {
      const e = err as { message?: unknown; code?: unknown };
      parentPort!.postMessage({ id: task.id, ok: false, message: String(e?.message ?? err), code: typeof e?.code === "string" ? e.code : undefined } satisfies StatsAnswer);
    },
  );
});
