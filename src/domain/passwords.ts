import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/**
 * Passwords of the web app (decisions §13), hashed with scrypt from node:crypto: memory-hard, and
 * well kept (OpenSSL's). A hash records its own parameters (`scrypt$N$r$p$salt$hash`), so they can
 * be raised later without making older hashes unreadable.
 */
/**
 * log2 of scrypt's N for new hashes (QUIRE_PASSWORD_HASH_COST). 2^14 with r = 8 and p = 5 is one of
 * OWASP's equally strong scrypt settings (2^17/p 1, 2^16/p 2, 2^15/p 3, 2^14/p 5, 2^13/p 10): the same
 * defence, but 16 MiB a hash instead of 128, which measured about half the time of 2^17 on a busy
 * machine (`npm run bench -- sign-in`, docs/app.md "Sign-in"). Hashes made with 2^17 (earlier
 * versions) stay valid and are rehashed with these settings at their next sign-in.
 */
export const DEFAULT_HASH_COST = 14;
const BLOCK_SIZE = 8;
const KEY_LENGTH = 32;

/** OWASP's parallelism for each N of its equally strong settings; outside them, 1. */
const PARALLELISM_FOR_COST: Readonly<Record<number, number>> = { 13: 10, 14: 5, 15: 3, 16: 2 };
export const parallelismFor = (cost: number): number => PARALLELISM_FOR_COST[cost] ?? 1;

/** Long enough to be worth hashing, short enough that nobody makes the server hash megabytes. */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 128 * r * p + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Why a password cannot be set, in words for people; undefined when it can. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `A password may have at most ${MAX_PASSWORD_LENGTH} characters.`;
  return undefined;
}

export async function hashPassword(password: string, cost = DEFAULT_HASH_COST): Promise<string> {
  const salt = randomBytes(16);
  const n = 2 ** cost;
  const p = parallelismFor(cost);
  const key = await derive(password, salt, n, BLOCK_SIZE, p);
  return `scrypt$${n}$${BLOCK_SIZE}$${p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** Whether a stored hash was made with other settings than new ones get: it is rehashed at its next sign-in. */
export function needsRehash(stored: string, cost = DEFAULT_HASH_COST): boolean {
  const [scheme, n, r, p] = stored.split("$");
  return scheme !== "scrypt" || Number(n) !== 2 ** cost || Number(r) !== BLOCK_SIZE || Number(p) !== parallelismFor(cost);
}

/**
 * Makes the decoy of `cost` now (startup), so the first sign-in with an unknown username does not
 * pay for making it on top of its own check (it took twice as long as any other).
 */
export function prepareDecoy(cost = DEFAULT_HASH_COST): Promise<void> {
  return decoyOf(cost).then(() => undefined);
}

/** Hashes of nothing anybody can type, checked when there is no account, so that takes as long as a real check. */
const decoys = new Map<number, Promise<string>>();
function decoyOf(cost: number): Promise<string> {
  let decoy = decoys.get(cost);
  if (decoy === undefined) {
    decoy = hashPassword(randomBytes(32).toString("hex"), cost);
    decoys.set(cost, decoy);
  }
  return decoy;
}

/**
 * Whether the password matches the stored hash. With no hash (no such account, or no password
 * set) it still does the same work, against a decoy made at `cost` (the cost new hashes get), so
 * the answer's timing tells nothing.
 */
export async function verifyPassword(password: string, stored: string | null | undefined, cost = DEFAULT_HASH_COST): Promise<boolean> {
  const parts = (stored ?? (await decoyOf(cost))).split("$");
  const [scheme, n, r, p, salt, key] = parts;
  if (parts.length !== 6 || scheme !== "scrypt" || !salt || !key) return false;
  const expected = Buffer.from(key, "base64url");
  const got = await derive(password.slice(0, MAX_PASSWORD_LENGTH), Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p));
  return got.length === expected.length && timingSafeEqual(got, expected) && stored !== null && stored !== undefined;
}
