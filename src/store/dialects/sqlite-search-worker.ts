/**
 * One search thread of the pool (sqlite-search-pool.ts): its own read-only connection to the
 * database file, and FTS5 searches run on it one at a time, as the main thread asks.
 */
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import SQLite from "better-sqlite3";
import { CamelCasePlugin, Kysely, SqliteDialect } from "kysely";
import type { Database } from "../schema.ts";
import { withStatementCache } from "./sqlite.ts";
import { sqliteSearch } from "./sqlite-search.ts";
import type { SearchAnswer, SearchTask } from "./sqlite-search-messages.ts";

const { file } = workerData as { file: string };
// On Linux a thread has a nice value of its own (setpriority on the calling thread): searches give
// way to the event loop when the cores are busy, so a flood of costly queries slows searches, not
// every other request. Elsewhere, or where it is refused, the thread keeps the process's priority.
try {
  setPriority(10);
} catch {
  // not permitted here: same priority as the event loop
}
// Read-only: a search never writes, and a bug here could not either. WAL lets it read beside the writer.
const conn = new SQLite(file, { readonly: true, fileMustExist: true });
conn.pragma("busy_timeout = 5000");
// As the main connection's (sqlite.ts): a search of a common word reads its lists from memory.
conn.pragma("cache_size = -65536");
const nothing = () => undefined;
const db = new Kysely<Database>({
  dialect: new SqliteDialect({ database: withStatementCache(conn, { noteWrite: nothing, noteIterationStarted: nothing, noteIterationEnded: nothing }) }),
  plugins: [new CamelCasePlugin()],
});

parentPort!.on("message", (task: SearchTask) => {
  sqliteSearch.search(db, task.req).then(
    (result) => parentPort!.postMessage({ id: task.id, ok: true, result } satisfies SearchAnswer),
    (err: unknown) => {
      const e = err as { message?: unknown; code?: unknown };
      parentPort!.postMessage({ id: task.id, ok: false, message: String(e?.message ?? err), code: typeof e?.code === "string" ? e.code : undefined } satisfies SearchAnswer);
    },
  );
});
