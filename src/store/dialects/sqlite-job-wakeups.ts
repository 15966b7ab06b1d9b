import { watch, type FSWatcher } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { QueuedJobsNotifier, WakeupLog } from "./dialect.ts";

/**
 * A commit writes several pages to the `-wal` file, each a change event: they make one wake-up,
 * this long after the first, when the commit is long complete and visible.
 */
const COALESCE_MS = 20;

/**
 * Every process sharing a SQLite file runs on the machine that holds it, so a change to the file
 * is the signal: every commit writes the `-wal` file beside it. Other writes (a heartbeat, a
 * publish) wake the workers too; that costs one claim that finds nothing.
 */
export function sqliteJobWakeups(file: string, log?: WakeupLog): QueuedJobsNotifier {
  return {
    async watchQueuedJobs(onQueued) {
      // A private in-memory or temporary database: no other process can queue into it.
      if (file === "" || file === ":memory:") return async () => {};
      const path = resolve(file);
      const name = basename(path);
      let watcher: FSWatcher | undefined;
      let pending: NodeJS.Timeout | undefined;
      const stop = (): void => {
        clearTimeout(pending);
        pending = undefined;
        watcher?.close();
        watcher = undefined;
      };
      const changed = (filename: string | null): void => {
        // Without a name (some platforms) it may be ours: a needless claim is cheaper than a late one.
        if (!watcher || (filename !== null && !filename.startsWith(name))) return;
        pending ??= setTimeout(() => {
          pending = undefined;
          onQueued();
        }, COALESCE_MS);
      };
      try {
        watcher = watch(dirname(path), (_event, filename) => changed(filename));
        watcher.on("error", (err) => {
          log?.debug({ err }, "watching the database file failed; idle workers poll only");
          stop();
        });
      } catch (err) {
        // No inotify watch left, an unsupported file system…: polling alone still finds every job.
        log?.debug({ err }, "cannot watch the database file; idle workers poll only");
        stop();
      }
      return async () => stop();
    },
  };
}
