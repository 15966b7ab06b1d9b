import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/**
 * Passwords of the web app (decisions §13), hashed with scrypt from node:crypto: memory-hard, and
 * well kept (OpenSSL's). A hash records its own parameters (`scrypt$N$r$p$salt$hash`), so they can
 * be raised later without making older hashes unreadable.
 */
/** log2 of scrypt's N: 2^17 with r = 8 is 128 MiB per hash, OWASP's first choice (QUIRE_PASSWORD_HASH_COST). */
export const DEFAULT_HASH_COST = 17;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;

/** Long enough to be worth hashing, short enough that nobody makes the server hash megabytes. */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 };
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
  const key = await derive(password, salt, n, BLOCK_SIZE, PARALLELISM);
  return `scrypt$${n}$${BLOCK_SIZE}$${PARALLELISM}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** Hashes of nothing anybody can type, checked when there is no account, so that takes as long as a real check. */
const decoys = new Map<number, Promise<string>>();

/**
 * Whether the password matches the stored hash. With no hash (no such account, or no password
 * set) it still does the same work, against a decoy made at `cost` (the cost new hashes get), so
 * the answer's timing tells nothing.
 */
export async function verifyPassword(password: string, stored: string | null | undefined, cost = DEFAULT_HASH_COST): Promise<boolean> {
  let decoy = decoys.get(cost);
  if (stored == null && decoy === undefined) {
    decoy = hashPassword(randomBytes(32).toString("hex"), cost);
    decoys.set(cost, decoy);
  }
  const parts = (stored ?? (await decoy!)).split("$");
  const [scheme, n, r, p, salt, key] = parts;
  if (parts.length !== 6 || scheme !== "scrypt" || !salt || !key) return false;
  const expected = Buffer.from(key, "base64url");
  const got = await derive(password.slice(0, MAX_PASSWORD_LENGTH), Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p));
  return got.length === expected.length && timingSafeEqual(got, expected) && stored !== null && stored !== undefined;
}
