import { addressGroup } from "../../ops/client-address.ts";
import { LeakyBuckets } from "../../ops/leaky-buckets.ts";

/** The per-address and per-(username, address) buckets drain in this long. */
const WINDOW_MS = 15 * 60_000;
/** The per-username bound on failures from unknown clients is slower: it drains in an hour. */
const ACCOUNT_WINDOW_MS = 60 * 60_000;
/** An address an account signed in from stays known this long, and at most this many per account. */
const KNOWN_FOR_MS = 90 * 24 * 3600_000;
const KNOWN_PER_ACCOUNT = 8;
/** Accounts whose known addresses are kept; past it the least recently used are forgotten. */
const MAX_KNOWN_ACCOUNTS = 50_000;

/** Why an attempt is refused before any hashing, or "ok". */
export type SignInVerdict = "ok" | "address" | "username-here" | "username-guarded";

export interface SignInClient {
  /** As typed (trimmed, lower-cased here). */
  username: string;
  clientAddress: string;
  /** A device cookie this browser holds for this very username, verified (its random id). */
  device?: string | undefined;
}

export interface SignInLimits {
  /** Attempts for one username from one address (an IPv6 /64), or from one device cookie. */
  perAccountAddress: number;
  /** Attempts from one address, whatever the username. */
  perAddress: number;
  /** Failures for one username from clients it does not know, from anywhere, per hour. */
  failuresPerAccount: number;
}

/**
 * Sign-in throttling that nobody can turn against someone else (issue 23 item 3), after the
 * well-known designs (OWASP's device cookies, "unfamiliar location" lockouts):
 *
 * - per address, any username: one address cannot guess at many accounts;
 * - per (username, address), and per device cookie: the lockout a guesser meets, which only they meet;
 * - per username, failures from clients the account does not know (no device cookie of its own,
 *   an address it never signed in from), from all addresses together, drained in an hour: once
 *   full, only known clients may try, so a botnet spreading guesses over addresses stops while the
 *   account's owner, from a device or network they used before, still signs in.
 *
 * Every bound is decided before the password is hashed (or the account even looked up), so a
 * refused attempt costs a few map look-ups. Counted for any username typed: whether it exists
 * changes nothing, so the limits tell nobody which accounts exist.
 */
export class SignInLimit {
  private readonly byAddress: LeakyBuckets;
  private readonly byPair: LeakyBuckets;
  private readonly byDevice: LeakyBuckets;
  private readonly unknownFailures: LeakyBuckets;
  /** username → address group → when last signed in from it; map order is the order of last use. */
  private readonly known = new Map<string, Map<string, number>>();

  constructor(opts: SignInLimits, private readonly clock: () => number = Date.now) {
    this.byAddress = new LeakyBuckets(opts.perAddress, WINDOW_MS);
    this.byPair = new LeakyBuckets(opts.perAccountAddress, WINDOW_MS);
    this.byDevice = new LeakyBuckets(opts.perAccountAddress, WINDOW_MS);
    this.unknownFailures = new LeakyBuckets(opts.failuresPerAccount, ACCOUNT_WINDOW_MS);
  }

  /** Whether the account knows this client: its own device cookie, or an address it signed in from. */
  knows(c: SignInClient): boolean {
    if (c.device !== undefined) return true;
    const seen = this.known.get(norm(c.username))?.get(addressGroup(c.clientAddress));
    return seen !== undefined && this.clock() - seen < KNOWN_FOR_MS;
  }

  /** Before hashing: whether this attempt may go on; when it may, it is counted. */
  attempt(c: SignInClient): SignInVerdict {
    const now = this.clock();
    const account = norm(c.username);
    const address = addressGroup(c.clientAddress);
    const pair = `${account}\n${address}`;
    if (this.byAddress.full(address, now)) return "address";
    if (this.byPair.full(pair, now) || (c.device !== undefined && this.byDevice.full(c.device, now))) return "username-here";
    if (!this.knows(c) && this.unknownFailures.full(account, now)) return "username-guarded";
    this.byAddress.pour(address, now);
    this.byPair.pour(pair, now);
    if (c.device !== undefined) this.byDevice.pour(c.device, now);
    return "ok";
  }

  /** After a wrong password: a client the account does not know fills its per-username bound. */
  failed(c: SignInClient): void {
    if (!this.knows(c)) this.unknownFailures.pour(norm(c.username), this.clock());
  }

  /** After a right password: the address is known to the account from now on. */
  succeeded(c: SignInClient): void {
    const now = this.clock();
    const account = norm(c.username);
    const addresses = this.known.get(account) ?? new Map<string, number>();
    this.known.delete(account);
    addresses.delete(addressGroup(c.clientAddress));
    addresses.set(addressGroup(c.clientAddress), now);
    for (const k of addresses.keys()) {
      if (addresses.size <= KNOWN_PER_ACCOUNT) break;
      addresses.delete(k);
    }
    this.known.set(account, addresses);
    for (const k of this.known.keys()) {
      if (this.known.size <= MAX_KNOWN_ACCOUNTS) break;
      this.known.delete(k);
    }
  }
}

const norm = (username: string) => username.trim().toLowerCase();
