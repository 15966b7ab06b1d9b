/**
 * The statistics writer (sqlite-stats-writer.ts), a process of its own forked by the server: its
 * own read-write connection to the database file, on which the counter's batches are written one
 * at a time, as the server sends them over IPC. Only the statistics tables (and the day's salts
 * and readers) are written here. When the server goes (its IPC channel closes), the batch under
 * way is finished and the process exits.
 */
import { readdirSync } from "node:fs";
import { setPriority } from "node:os";
import SQLite from "better-sqlite3";
import { CamelCasePlugin, Kysely } from "kysely";
import type { Database } from "../schema.ts";
import { statisticsRepo } from "../statistics.ts";
import { immediateSqliteDialect, withStatementCache } from "./sqlite.ts";
import type { StatsAnswer, StatsTask } from "./sqlite-stats-messages.ts";

/** argv: node, thread-boot.mjs, this module, the database file. */
const file = process.argv[3]!;

/**
 * This process's nice value, every thread of it (Linux; elsewhere it keeps the server's). Counting
 * is background work: when the processors are busy, a batch should wait for the pages being
 * served, not they for it. At 10 it still gets about a tenth of what a busy request thread gets,
 * more than counting at full load needs (the kill test's one second).
 */
const WRITER_NICE = 10;
try {
  for (const tid of readdirSync("/proc/self/task")) setPriority(Number(tid), WRITER_NICE);
} catch {
  // No /proc (another system): the process keeps the server's priority.
}
const conn = new SQLite(file, { fileMustExist: true });
// As the main connection (sqlite.ts): the same journal, durability and lock wait.
conn.pragma("journal_mode = WAL");
conn.pragma("synchronous = NORMAL");
conn.pragma("foreign_keys = ON");
conn.pragma("busy_timeout = 5000");
const nothing = () => undefined;
const db = new Kysely<Database>({
  // Its transaction takes the write lock at its start, as the server's do: a batch reads readers, then writes them whole.
  dialect: immediateSqliteDialect({ database: withStatementCache(conn, { noteWrite: nothing, noteIterationStarted: nothing, noteIterationEnded: nothing }) }),
  plugins: [new CamelCasePlugin()],
});
const statistics = statisticsRepo(db, "sqlite");

let writing = 0;
let serverGone = false;
process.on("disconnect", () => {
  serverGone = true;
  if (writing === 0) process.exit(0);
});

process.on("message", (task: StatsTask) => {
  writing++;
  const answer = (a: StatsAnswer) => {
    writing--;
    if (serverGone) {
      if (writing === 0) process.exit(0);
      return;
    }
    process.send!(a);
  };
  statistics.recordAndSweep(task.events, task.sweepBefore).then(
    (counted) => answer({ id: task.id, ok: true, counted }),
    (err: unknown) => {
      const e = err as { message?: unknown; code?: unknown };
      answer({ id: task.id, ok: false, message: String(e?.message ?? err), code: typeof e?.code === "string" ? e.code : undefined });
    },
  );
});
