import type { FastifyBaseLogger } from "fastify";
import type { Store } from "../store/open-store.ts";
import { keyEvent, unkeyedVisitor, type StatEvent } from "../store/statistics.ts";
import { FLUSH_EVERY_MS } from "../domain/statistics.ts";

/** Events held at most (a database that stopped answering must not grow the process without bound). */
const MAX_BUFFERED = 200_000;
/**
 * How long a visitor (an address and user agent) may wait in the buffer unkeyed while the database
 * refuses batches and this process has no salt for its day to key it with: then it is dropped.
 */
const VISITOR_HOLD_MS = 60_000;
/** Their memory at most, as `heldBytes` counts it: a visitor's user agent may be 512 characters. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** About what a buffered event holds: its object, and its visitor's strings (two bytes a character at most). */
function heldBytes(e: StatEvent): number {
  const v = unkeyedVisitor(e);
  return v === undefined ? 200 : 200 + 2 * (v.address.length + v.addressGroup.length + v.userAgent.length);
}
/** Events written per transaction: short enough that other writers wait for SQLite's lock only briefly. */
const BATCH = 5_000;
/** How often what is kept only for its day (the salt, today's readers) is swept. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Counting never waits for the database (decisions §15): requests push events here and are
 * answered at once; every half second the buffer is written in one transaction per batch
 * (src/store/statistics.ts `write`: on SQLite by a thread of its own), and once more on a normal stop. A batch the database refused stays
 * at the front of the buffer for the next tick, within MAX_BUFFERED (and MAX_BUFFERED_BYTES for new events).
 */
export class StatsCounter {
  private buffer: StatEvent[] = [];
  private bufferedBytes = 0;
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
    private readonly flushEveryMs = FLUSH_EVERY_MS,
  ) {}

  push(event: StatEvent): void {
    const bytes = heldBytes(event);
    if (this.buffer.length >= MAX_BUFFERED || this.bufferedBytes + bytes > MAX_BUFFERED_BYTES) {
      this.dropped++;
      return;
    }
    this.buffer.push(event);
    this.bufferedBytes += bytes;
  }

  get pending(): number {
    return this.buffer.length;
  }

  /** Buffered events still holding a visitor's address and user agent (not yet keyed). */
  get heldVisitors(): number {
    return this.buffer.reduce((n, e) => n + (unkeyedVisitor(e) === undefined ? 0 : 1), 0);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.flushEveryMs);
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

  /**
   * A batch the database refused, as the buffer keeps it: its visitors keyed with the salt this
   * process holds for their day, so no address waits for the database to come back; without one
   * (an outage since the day began), a visitor is kept at most VISITOR_HOLD_MS.
   */
  private keptOf(batch: readonly StatEvent[], now: number): StatEvent[] {
    const kept: StatEvent[] = [];
    for (const e of batch) {
      if (unkeyedVisitor(e) === undefined) {
        kept.push(e);
        continue;
      }
      const salt = this.store.dailySalts.cachedSalt(e.at);
      if (salt !== undefined) kept.push(keyEvent(salt, e));
      else if (now - e.at <= VISITOR_HOLD_MS) kept.push(e);
      else this.dropped++;
    }
    return kept;
  }

  private async writeAll(): Promise<void> {
    const now = this.now();
    // Keeps this process's salt of the day at hand for keptOf (one query a day, once there is something to count).
    if (this.buffer.length > 0) void this.store.dailySalts.saltFor(now).catch(() => undefined);
    let sweep = now - this.lastSweep >= SWEEP_EVERY_MS;
    // What was buffered when this tick began: events that arrive while it writes wait for the next
    // one (a loop until the buffer was empty wrote, under steady load, a transaction of a few events
    // every few milliseconds instead of one every tick).
    let left = this.buffer.length;
    while (left > 0 || sweep) {
      const batch = this.buffer.splice(0, Math.min(BATCH, left));
      left -= batch.length;
      const batchBytes = batch.reduce((sum, e) => sum + heldBytes(e), 0);
      this.bufferedBytes -= batchBytes;
      // The day's sweep goes with the last batch (or alone), written by the same writer.
      const sweepBefore = sweep && left === 0 ? now : undefined;
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
        const kept = this.keptOf(batch.slice(0, room), now);
        this.buffer.unshift(...kept);
        this.bufferedBytes += kept.reduce((sum, e) => sum + heldBytes(e), 0);
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
