// The leaky bucket is shared with the anonymous pages' budget; the API's error 012 is one use of it.
export { createRateLimiter, type RateLimiter, type RateLimitOptions } from "../ops/leaky-buckets.ts";

/**
 * The bucket a request pours into: its key's, or, when not correctly signed, a second one of the
 * same key, so that a flood by someone who knows only the key never throttles its owner
 * (decisions §2 step 3). Keys are `[a-z0-9]{32}`, so the suffix cannot name another key.
 */
export function bucketOf(apiKey: string, signed: boolean): string {
  return signed ? apiKey : `${apiKey}/unsigned`;
}
