import type { FastifyBaseLogger } from "fastify";
import type { Store } from "../store/open-store.ts";
import type { StatEvent } from "../store/statistics.ts";

/**
 * How often the buffer is sent to be written. A killed process loses at most the last second
 * (decisions §15): events wait for the next tick (half a second at most), and the other half
 * second is the write's, which takes a few milliseconds for a second's events
 * (test/system/statistics-kill.test.ts kills a server under load and checks it).
 */
export const FLUSH_EVERY_MS = 500;
/** Events held at most (a database that stopped answering must not grow the process without bound). */
const MAX_BUFFERED = 200_000;
/** Events written per transaction: short enough that other writers wait for SQLite's lock only briefly. */
const BATCH = 5_000;
/** How often what is kept only for its day (the salt, today's readers) is swept. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Counting never waits for the database (decisions §15): requests push events here and are
 * answered at once; every half second the buffer is written in one transaction per batch
 * (src/store/statistics.ts `write`: on SQLite by a thread of its own), and once more on a normal stop. A batch the database refused stays
 * at the front of the buffer for the next tick, within MAX_BUFFERED.
 */
export class StatsCounter {
  private buffer: StatEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private lastSweep = 0;
  /** Events dropped because the buffer was full (for tests and operators). */
  dropped = 0;
  /** Events written that counted for an existing document. */
  written = 0;

  constructor(
    private readonly store: Store,
    private readonly log?: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
  ) {}

  push(event: StatEvent): void {
    if (this.buffer.length >= MAX_BUFFERED) {
      this.dropped++;
      return;
    }
    this.buffer.push(event);
  }

  get pending(): number {
    return this.buffer.length;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  /** Writes everything buffered so far (one flush at a time: a caller during one waits for it, then flushes). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    const now = this.now();
    let sweep = now - this.lastSweep >= SWEEP_EVERY_MS;
    while (this.buffer.length > 0 || sweep) {
      const batch = this.buffer.splice(0, BATCH);
      // The day's sweep goes with the last batch (or alone), written by the same writer.
      const sweepBefore = sweep && this.buffer.length === 0 ? now : undefined;
      try {
        this.written += await this.store.statistics.write(batch, sweepBefore);
        if (sweepBefore !== undefined) {
          this.lastSweep = now;
          sweep = false;
        }
      } catch (err) {
        // Kept for the next tick: at most MAX_BUFFERED, newest dropped first.
        const room = Math.max(0, MAX_BUFFERED - this.buffer.length);
        this.dropped += Math.max(0, batch.length - room);
        this.buffer.unshift(...batch.slice(0, room));
        this.log?.warn({ err }, "statistics: a batch could not be written; retrying");
        return;
      }
    }
  }

  /** Stops the timer and writes what is left (a normal stop loses nothing). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
