import { addressGroup } from "../../ops/client-address.ts";

/** A full bucket drains in this long: after a burst of attempts, one more comes back every WINDOW / burst. */
const WINDOW_MS = 15 * 60_000;
/** Buckets kept at most per kind; past it the emptiest are forgotten first (a flood of names cannot grow memory). */
const MAX_BUCKETS = 50_000;

interface Bucket {
  level: number;
  at: number;
}

/** Leaky buckets by key, each emptied over 15 minutes (also the readers' comment and rating limits, src/web/reader-feedback-routes.ts). */
export class Buckets {
  private readonly buckets = new Map<string, Bucket>();
  constructor(private readonly burst: number) {}

  private level(key: string, now: number): number {
    const b = this.buckets.get(key);
    return b ? Math.max(0, b.level - ((now - b.at) / WINDOW_MS) * this.burst) : 0;
  }

  full(key: string, now: number): boolean {
    return this.level(key, now) + 1 > this.burst;
  }

  pour(key: string, now: number): void {
    const level = this.level(key, now) + 1;
    this.buckets.delete(key); // re-inserted last: the map's order is the order of last use
    this.buckets.set(key, { level, at: now });
    if (this.buckets.size > MAX_BUCKETS) {
      for (const [k, b] of this.buckets) {
        if (this.buckets.size <= MAX_BUCKETS * 0.9) break;
        if (now - b.at > WINDOW_MS || this.buckets.size > MAX_BUCKETS) this.buckets.delete(k);
      }
    }
  }
}

/**
 * Sign-in attempts, limited per username and per client address (a leaky bucket each). Every
 * attempt counts, for any username typed: whether it exists changes nothing, so the limit tells
 * nobody which accounts exist. A refused attempt hashes nothing and counts nothing more.
 */
export class SignInLimit {
  private readonly byAccount: Buckets;
  private readonly byAddress: Buckets;

  constructor(opts: { perAccount: number; perAddress: number }, private readonly clock: () => number = Date.now) {
    this.byAccount = new Buckets(opts.perAccount);
    this.byAddress = new Buckets(opts.perAddress);
  }

  /** Whether this attempt may go on; when it may, it is counted. */
  attempt(username: string, clientAddress: string): boolean {
    const now = this.clock();
    const account = username.trim().toLowerCase();
    const address = addressGroup(clientAddress);
    if (this.byAccount.full(account, now) || this.byAddress.full(address, now)) return false;
    this.byAccount.pour(account, now);
    this.byAddress.pour(address, now);
    return true;
  }
}
