import { bearerTokenHash, bearerTokenOf, looksLikeBearerToken } from "../../domain/bearer-tokens.ts";
import type { ApiTokensRepo } from "../../store/api-tokens.ts";
import { V2Error, type V2Caller } from "./v2-operation.ts";

/** Failed token attempts one address may make in a window before it is refused for the rest of it. */
const FAILURES_PER_WINDOW = 20;
const WINDOW_MS = 60_000;
/** Addresses remembered at most; beyond, the oldest windows are forgotten (memory stays bounded). */
const MAX_ADDRESSES = 10_000;

/**
 * Counts failed bearer-token attempts per address (an IPv6 /64 counts as one): past the limit, the
 * address is answered 429 without any lookup until its window ends. Valid tokens are never counted,
 * so a client that polls (research §2.7 item 9) is never slowed.
 */
export class TokenGuessLimit {
  private readonly windows = new Map<string, { failures: number; until: number }>();
  constructor(private readonly clock: () => number = Date.now) {}

  /** Whether any address has failed lately: while none has, no request needs its address worked out. */
  get idle(): boolean {
    return this.windows.size === 0;
  }

  blocked(address: string): boolean {
    const w = this.windows.get(address);
    if (!w) return false;
    if (w.until <= this.clock()) {
      this.windows.delete(address);
      return false;
    }
    return w.failures >= FAILURES_PER_WINDOW;
  }

  fail(address: string): void {
    const now = this.clock();
    let w = this.windows.get(address);
    if (!w || w.until <= now) {
      if (this.windows.size >= MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value!);
      w = { failures: 0, until: now + WINDOW_MS };
      this.windows.set(address, w);
    }
    w.failures++;
  }
}

const invalidToken = () => new V2Error(401, "Invalid token");

/**
 * The caller of `Authorization: Bearer <token>` (decisions §14). The token is hashed and looked up
 * by its hash, so how long a lookup takes says nothing of how close a guess was; any failure is
 * the same 401 `{"message":"Invalid token"}`.
 */
export async function authenticateBearer(
  tokens: ApiTokensRepo,
  limit: TokenGuessLimit,
  header: string | undefined,
  addressOf: () => string,
  now: number,
): Promise<V2Caller> {
  if (!limit.idle && limit.blocked(addressOf())) throw new V2Error(429, "Too many failed token attempts; try again later");
  const token = bearerTokenOf(header);
  const tokenHash = bearerTokenHash(token ?? "");
  const owner = token !== undefined && looksLikeBearerToken(token) ? await tokens.ownerOf(tokenHash, now) : undefined;
  if (!owner) {
    limit.fail(addressOf());
    throw invalidToken();
  }
  return { ...owner, tokenHash };
}
