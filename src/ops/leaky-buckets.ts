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

  /** What the key's bucket holds now, after draining since it was last poured. */
  level(key: string, now: number): number {
    const b = this.buckets.get(key);
    return b ? Math.max(0, b.level - ((now - b.at) / this.windowMs) * this.burst) : 0;
  }

  /** Forgets the buckets that have drained empty: an empty bucket is the same as none. */
  forgetDrained(now: number): void {
    for (const key of this.buckets.keys()) if (this.level(key, now) === 0) this.buckets.delete(key);
  }

  /** Buckets held. */
  get size(): number {
    return this.buckets.size;
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

/**
 * The buckets above told as a rate: the API's error 012 per API key (decisions §2 step 3, §9; see
 * api/rate-limit.ts), v2's budget per token and the anonymous pages' budget per client address
 * (web/anonymous-budget.ts). Each request pours one unit into the key's bucket, which drains at
 * `perSecond`; a request that would make it overflow `burst` is refused and pours nothing, so a key
 * that waits is served again. Buckets drained empty are swept, so memory holds the keys active in
 * the last `burst / perSecond` seconds (and never more than the buckets' bound).
 */
export interface RateLimitOptions {
  /** Requests a key may make at once. */
  burst: number;
  /** Requests per second a key may make for ever; 0 turns the limit off. */
  perSecond: number;
  /** Milliseconds; injectable for tests. */
  clock?: () => number;
  /** Idle buckets are swept at most this often (ms). */
  sweepEveryMs?: number;
}

export interface RateLimiter {
  /** Whether the key may make one more request now (and counts it when so). */
  allow(key: string): boolean;
  /** Like allow: 0 when the request may go on (and it is counted), else the milliseconds until it could. */
  take(key: string): number;
  /**
   * Like take, with what a client is told of its budget (the `x-ratelimit-*` headers of v2):
   * `limit` (the burst), `remaining` requests it may make at once now, and `resetMs`, the epoch
   * milliseconds when its bucket will have drained empty. With the limit off: undefined.
   */
  takeWithStatus(key: string): { waitMs: number; limit: number; remaining: number; resetMs: number } | undefined;
  /** Buckets held, for tests. */
  size(): number;
}

export function createRateLimiter(opts: RateLimitOptions): RateLimiter {
  const clock = opts.clock ?? Date.now;
  const { burst, perSecond } = opts;
  const sweepEveryMs = opts.sweepEveryMs ?? 60_000;
  // Off (perSecond 0): no buckets at all.
  const buckets = perSecond > 0 ? new LeakyBuckets(burst, (burst / perSecond) * 1000) : undefined;
  let lastSweep = clock();

  const take = (key: string): number => {
    if (!buckets) return 0;
    const now = clock();
    if (now - lastSweep >= sweepEveryMs) {
      lastSweep = now;
      buckets.forgetDrained(now);
    }
    if (buckets.take(key, now)) return 0;
    // Refused requests pour nothing: the wait is until one unit has drained below the brim.
    return Math.max(1, Math.ceil(((buckets.level(key, now) + 1 - burst) / perSecond) * 1000));
  };
  return {
    allow: (key) => take(key) === 0,
    take,
    takeWithStatus(key) {
      if (!buckets) return undefined;
      const waitMs = take(key);
      const now = clock();
      const level = buckets.level(key, now);
      return { waitMs, limit: burst, remaining: Math.max(0, Math.floor(burst - level)), resetMs: now + Math.ceil((level / perSecond) * 1000) };
    },
    size: () => buckets?.size ?? 0,
  };
}
