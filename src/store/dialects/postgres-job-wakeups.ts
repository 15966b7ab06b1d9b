import pg from "pg";
import type { QueuedJobsNotifier, WakeupLog } from "./dialect.ts";

/** The channel migration 0010's trigger notifies after every insert into `jobs`. */
const CHANNEL = "quire_jobs";

/** First wait before connecting again; it doubles up to the maximum while the database stays away. */
const RECONNECT_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;

/**
 * One connection of its own, outside the pool, that only LISTENs: the pool's connections come and
 * go, and a LISTEN lasts as long as its session. NOTIFY is delivered at commit, so a wake-up never
 * arrives before its job can be claimed. Notifications sent while the connection is down are lost;
 * the workers' polling finds those jobs, and a reconnect wakes them once in case.
 */
export function postgresJobWakeups(url: string, log?: WakeupLog, reconnectMs = RECONNECT_MS): QueuedJobsNotifier {
  return {
    async watchQueuedJobs(onQueued) {
      let closed = false;
      /** The connection in use or being made; whoever takes it away (loss, failure, close) ends it. */
      let client: pg.Client | undefined;
      let retry: NodeJS.Timeout | undefined;
      let delay = reconnectMs;

      const again = (): void => {
        retry = setTimeout(() => {
          retry = undefined;
          if (!closed) void listen(true);
        }, delay);
        delay = Math.min(delay * 2, RECONNECT_MAX_MS);
      };
      /** Drops `c` unless that was done already ("error" and "end" both come for one loss). */
      const drop = (c: pg.Client): boolean => {
        if (client !== c) return false;
        client = undefined;
        c.end().catch(() => {});
        return true;
      };
      const listen = async (reconnecting: boolean): Promise<void> => {
        const c = new pg.Client({ connectionString: url, keepAlive: true, connectionTimeoutMillis: 10_000, application_name: "quire job wake-ups" });
        client = c;
        let listening = false;
        const lost = (err?: unknown): void => {
          if (!drop(c) || closed) return;
          if (listening) log?.warn({ err }, "the queued-jobs listener lost its connection; reconnecting, idle workers poll meanwhile");
          again();
        };
        c.on("notification", (n) => {
          if (n.channel === CHANNEL) onQueued();
        });
        c.on("error", lost);
        c.on("end", () => lost());
        try {
          await c.connect();
          await c.query(`LISTEN ${CHANNEL}`);
        } catch (err) {
          if (client === c) log?.debug({ err }, "the queued-jobs listener cannot connect; idle workers poll meanwhile");
          lost(err);
          return;
        }
        if (client !== c) return; // closed, or lost, while it was connecting
        listening = true;
        delay = reconnectMs;
        // Whatever was queued while it was away was announced to nobody.
        if (reconnecting) onQueued();
      };

      await listen(false);
      return async () => {
        if (closed) return;
        closed = true;
        clearTimeout(retry);
        retry = undefined;
        const c = client;
        client = undefined;
        await c?.end().catch(() => {});
      };
    },
  };
}
