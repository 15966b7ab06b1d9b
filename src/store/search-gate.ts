/**
 * How many searches run at once, and how many may wait: past both, a search is refused at once
 * (`SearchBusyError`) rather than queued without end. A search holds a thread (SQLite) or a
 * connection (PostgreSQL) for its whole run, so an unbounded flood of costly queries from
 * anonymous readers would otherwise take every one of them, and the memory of its queue.
 *
 * A counter and a FIFO of waiters: small enough that a library would add more than it saves.
 */
export class SearchBusyError extends Error {
  constructor() {
    super("search is busy: too many searches are running or waiting");
    this.name = "SearchBusyError";
  }
}

export interface SearchLimits {
  /** Searches running at once (SQLite: threads with their own read connection; PostgreSQL: connections). */
  concurrency: number;
  /** Searches waiting for one of them, at most; past it a search is refused. */
  queue: number;
}

export const DEFAULT_SEARCH_LIMITS: SearchLimits = { concurrency: 1, queue: 64 };

export class SearchGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limits: SearchLimits) {}

  /** Searches running and waiting now (tests, metrics). */
  load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }

  /** Runs `task` when a place is free; throws SearchBusyError at once when the queue is full too. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limits.concurrency) {
      if (this.waiting.length >= this.limits.queue) throw new SearchBusyError();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      // The place goes to the next waiter as it is (active stays counted), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
