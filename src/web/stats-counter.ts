import type { FastifyBaseLogger } from "fastify";
import type { Store } from "../store/open-store.ts";
import { statEventsOf, StatBatchBuilder, statBatchOf, unkeyedVisitor, type LastView, type StatBatch } from "../store/stat-batch.ts";
import { keyEvent, type StatEvent } from "../store/statistics.ts";
import { FLUSH_EVERY_MS } from "../domain/statistics.ts";

/** Events held at most (a database that stopped answering must not grow the process without bound). */
const MAX_BUFFERED = 200_000;
/**
 * How long a visitor (an address and user agent) may wait in the buffer unkeyed while the database
 * refuses batches and this process has no salt for its day to key it with: then it is dropped.
 */
const VISITOR_HOLD_MS = 60_000;
/** Their memory at most, as StatBatchBuilder's `bytes` counts it (a visitor's user agent may be 512 characters). */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** Events written per transaction: short enough that other writers wait for SQLite's lock only briefly. */
const BATCH = 5_000;
/** How often what is kept only for its day (the salt, today's readers) is swept. */
const SWEEP_EVERY_MS = 60_000;

/** A batch in the queue, with what the buffer counts of it. */
interface Queued {
  batch: StatBatch;
  events: number;
  bytes: number;
  visitors: number;
}

function queued(b: StatBatchBuilder): Queued {
  return { batch: b.seal(), events: b.length, bytes: b.bytes, visitors: b.visitorCount };
}

/**
 * Counting never waits for the database (decisions §15): requests push events here and are
 * answered at once; every half second the buffer is written in one transaction per batch
 * (src/store/statistics.ts `write`: on SQLite by a process of its own), and once more on a normal stop.
 * Events go straight into columns (src/store/stat-batch.ts), BATCH to a batch: the buffer holds no
 * object per event. A batch the database refused stays at the front of the queue for the next tick,
 * within MAX_BUFFERED and MAX_BUFFERED_BYTES.
 */
export class StatsCounter {
  /** Batches full or sealed at a tick, oldest first; then the one being filled. */
  private queue: Queued[] = [];
  private open = new StatBatchBuilder();
  private queuedEvents = 0;
  private queuedBytes = 0;
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
    if (!this.room()) return;
    this.open.push(event);
    if (this.open.length >= BATCH) this.seal();
  }

  /**
   * Whether a reader page's view repeats the last one pushed for its user agent into the open
   * batch (StatBatchBuilder.repeats): then it adds nothing, and its caller is done.
   */
  repeatsView(last: LastView, documentId: string, at: number, address: string): boolean {
    return this.open.repeats(last, documentId, at, address);
  }

  /**
   * A reader page's view (StatBatchBuilder.pushView): nothing allocated for it on the request path
   * (its parameters spelled out: a rest parameter made an array of them on every view).
   */
  pushView(last: LastView, documentId: string, at: number, address: string, addressGroup: string, userAgent: string, embedded: boolean, startPage: number, referrerHost: string): void {
    if (!this.room()) return;
    this.open.pushView(last, documentId, at, address, addressGroup, userAgent, embedded, startPage, referrerHost);
    if (this.open.length >= BATCH) this.seal();
  }

  /** Whether one more event fits; counts it dropped when not. */
  private room(): boolean {
    if (this.pending < MAX_BUFFERED && this.queuedBytes + this.open.bytes < MAX_BUFFERED_BYTES) return true;
    this.dropped++;
    return false;
  }

  private seal(): void {
    if (this.open.length === 0) return;
    this.enqueue(queued(this.open));
    this.open = new StatBatchBuilder();
  }

  private enqueue(q: Queued, front = false): void {
    if (q.events === 0) return;
    if (front) this.queue.unshift(q);
    else this.queue.push(q);
    this.queuedEvents += q.events;
    this.queuedBytes += q.bytes;
  }

  private dequeue(q: Queued): void {
    this.queue.splice(this.queue.indexOf(q), 1);
    this.queuedEvents -= q.events;
    this.queuedBytes -= q.bytes;
  }

  get pending(): number {
    return this.queuedEvents + this.open.length;
  }

  /** Buffered events still holding a visitor's address and user agent (not yet keyed). */
  get heldVisitors(): number {
    return this.queue.reduce((n, q) => n + q.visitors, this.open.visitorCount);
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
   * A batch the database refused, as the queue keeps it: its visitors keyed with the salt this
   * process holds for their day, so no address waits for the database to come back; without one
   * (an outage since the day began), a visitor is kept at most VISITOR_HOLD_MS.
   */
  private keptOf(batch: StatBatch, now: number): Queued {
    const kept = new StatBatchBuilder();
    for (const e of statEventsOf(batch)) {
      if (unkeyedVisitor(e) === undefined) {
        kept.push(e);
        continue;
      }
      const salt = this.store.dailySalts.cachedSalt(e.at);
      if (salt !== undefined) kept.push(keyEvent(salt, e));
      else if (now - e.at <= VISITOR_HOLD_MS) kept.push(e);
      else this.dropped++;
    }
    return queued(kept);
  }

  private async writeAll(): Promise<void> {
    const now = this.now();
    // What was buffered when this tick began: events that arrive while it writes wait for the next
    // one (a loop until the buffer was empty wrote, under steady load, a transaction of a few events
    // every few milliseconds instead of one every tick).
    this.seal();
    const batches = [...this.queue];
    // Keeps this process's salt of the day at hand for keptOf (one query a day, once there is something to count).
    if (batches.length > 0) void this.store.dailySalts.saltFor(now).catch(() => undefined);
    let sweep = now - this.lastSweep >= SWEEP_EVERY_MS;
    if (batches.length === 0 && !sweep) return;
    for (let i = 0; i < Math.max(1, batches.length); i++) {
      const q = batches[i];
      // The day's sweep goes with the last batch (or alone), written by the same writer.
      const sweepBefore = sweep && i >= batches.length - 1 ? now : undefined;
      try {
        this.written += await this.store.statistics.write(q?.batch ?? EMPTY, sweepBefore);
        if (q) this.dequeue(q);
        if (sweepBefore !== undefined) {
          this.lastSweep = now;
          sweep = false;
        }
      } catch (err) {
        // Kept, at the front, for the next tick.
        if (q) {
          this.dequeue(q);
          this.enqueue(this.keptOf(q.batch, now), true);
        }
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

const EMPTY = statBatchOf([]);
