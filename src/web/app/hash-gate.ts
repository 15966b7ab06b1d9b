/** What a task refused at once is answered instead of its result. */
export const BUSY = Symbol("busy");

/**
 * Runs at most `slots` hashes at once; the others wait in order, those of clients the account knows
 * first, so a crowd of guesses from elsewhere cannot make its owner wait behind them. Unknown clients
 * may queue only so many: the rest are refused before any work.
 */
export class HashGate {
  private running = 0;
  private readonly knownWaiting: Array<() => void> = [];
  private readonly unknownWaiting: Array<() => void> = [];
  constructor(private readonly slots: number, private readonly maxUnknownWaiting: number) {}
  async run<T>(known: boolean, task: () => Promise<T>): Promise<T | typeof BUSY> {
    if (this.running >= this.slots) {
      if (!known && this.unknownWaiting.length >= this.maxUnknownWaiting) return BUSY;
      await new Promise<void>((resolve) => (known ? this.knownWaiting : this.unknownWaiting).push(resolve));
    } else this.running++;
    try {
      return await task();
    } finally {
      const next = this.knownWaiting.shift() ?? this.unknownWaiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
