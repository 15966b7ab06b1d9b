/** Buckets kept at most; past it the oldest are forgotten first (a flood of keys cannot grow memory). */
const DEFAULT_MAX_BUCKETS = 50_000;

interface Bucket {
  level: number;
  at: number;
}

/**
 * Leaky buckets by key: each holds up to `burst` and drains completely in `windowMs` (after a burst,
 * one more comes back every windowMs / burst). Bounded in memory: the least recently poured keys go
 * first once there are more than `maxBuckets`.
 */
export class LeakyBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly burst: number,
    private readonly windowMs: number,
    private readonly maxBuckets = DEFAULT_MAX_BUCKETS,
  ) {}

  private level(key: string, now: number): number {
    const b = this.buckets.get(key);
    return b ? Math.max(0, b.level - ((now - b.at) / this.windowMs) * this.burst) : 0;
  }

  /** Whether one more would overflow the key's bucket. */
  full(key: string, now: number): boolean {
    return this.level(key, now) + 1 > this.burst;
  }

  pour(key: string, now: number): void {
    const level = this.level(key, now) + 1;
    this.buckets.delete(key); // re-inserted last: the map's order is the order of last use
    this.buckets.set(key, { level, at: now });
    if (this.buckets.size > this.maxBuckets) {
      for (const [k, b] of this.buckets) {
        if (this.buckets.size <= this.maxBuckets * 0.9) break;
        if (now - b.at > this.windowMs || this.buckets.size > this.maxBuckets) this.buckets.delete(k);
      }
    }
  }

  /** Pours one when the bucket has room; answers whether it had. */
  take(key: string, now: number): boolean {
    if (this.full(key, now)) return false;
    this.pour(key, now);
    return true;
  }
}
