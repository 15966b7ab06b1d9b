/**
 * Error 012 (decisions §2 step 3, §9): a leaky bucket per API key and kind of request (see
 * bucketOf). Each request pours one unit
 * into the key's bucket, which drains at `perSecond`; a request that would make it overflow
 * `burst` is refused and pours nothing, so a key that waits is served again. A bucket that has
 * drained empty is the same as no bucket, so idle ones are dropped: memory stays bounded by the
 * keys active in the last `burst / perSecond` seconds.
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

interface Bucket {
  level: number;
  at: number;
}

export interface RateLimiter {
  /** Whether the key may make one more request now (and counts it when so). */
  allow(apiKey: string): boolean;
  /** Buckets held, for tests. */
  size(): number;
}

export function createRateLimiter(opts: RateLimitOptions): RateLimiter {
  const clock = opts.clock ?? Date.now;
  const { burst, perSecond } = opts;
  const sweepEveryMs = opts.sweepEveryMs ?? 60_000;
  const buckets = new Map<string, Bucket>();
  let lastSweep = clock();

  const drained = (b: Bucket, now: number) => Math.max(0, b.level - ((now - b.at) / 1000) * perSecond);

  const sweep = (now: number) => {
    lastSweep = now;
    for (const [key, b] of buckets) if (drained(b, now) === 0) buckets.delete(key);
  };

  return {
    allow(apiKey) {
      if (perSecond <= 0) return true;
      const now = clock();
      if (now - lastSweep >= sweepEveryMs) sweep(now);
      const b = buckets.get(apiKey);
      const level = b ? drained(b, now) : 0;
      if (level + 1 > burst) {
        // Refused requests pour nothing; only the drain so far is recorded.
        if (b) {
          b.level = level;
          b.at = now;
        }
        return false;
      }
      if (b) {
        b.level = level + 1;
        b.at = now;
      } else {
        buckets.set(apiKey, { level: 1, at: now });
      }
      return true;
    },
    size: () => buckets.size,
  };
}

/**
 * The bucket a request pours into: its key's, or, when not correctly signed, a second one of the
 * same key, so that a flood by someone who knows only the key never throttles its owner
 * (decisions §2 step 3). Keys are `[a-z0-9]{32}`, so the suffix cannot name another key.
 */
export function bucketOf(apiKey: string, signed: boolean): string {
  return signed ? apiKey : `${apiKey}/unsigned`;
}
