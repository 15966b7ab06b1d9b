/**
 * Tells idle workers that a job was queued, by whichever process queued it, so they claim it at
 * once instead of at their next poll. Best effort by design: a wake-up may be missed (a dropped
 * connection, a file system without change events) or come when nothing was queued, so it only
 * shortens a worker's wait; polling still finds every job.
 */
export interface QueuedJobsNotifier {
  /** Calls `onQueued` soon after a job is queued; resolves with the function that stops it. */
  watchQueuedJobs(onQueued: () => void): Promise<() => Promise<void>>;
}

/** What the notifiers say of their trouble (a pino logger fits). */
export interface WakeupLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The notifier of the database `openStore` opens for the same address. */
export function queuedJobsNotifier(databaseUrl: string, log?: WakeupLog): QueuedJobsNotifier {
  return {
    async watchQueuedJobs(onQueued) {
      // Loaded on use, as openDialect does: a SQLite process never loads the PostgreSQL driver.
      const notifier = /^postgres(ql)?:\/\//.test(databaseUrl)
        ? (await import("./dialects/postgres-job-wakeups.ts")).postgresJobWakeups(databaseUrl, log)
        : (await import("./dialects/sqlite-job-wakeups.ts")).sqliteJobWakeups(databaseUrl.replace(/^sqlite:(\/\/)?/, ""), log);
      return notifier.watchQueuedJobs(onQueued);
    },
  };
}
