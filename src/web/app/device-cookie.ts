import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const DEVICE_COOKIE = "quire_device";
/** A browser stays known to an account this long after it last signed in there. */
export const DEVICE_COOKIE_MAX_AGE_S = 180 * 24 * 3600;

/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser that
 * signed in to an account gets `v1.<random id>.<HMAC of username and id>`. It names no account and
 * proves, for that username only, "this browser signed in here before", which lets its owner pass
 * the per-username bound that guesses from elsewhere fill (sign-in-limit.ts).
 */
export class DeviceCookies {
  private readonly key: Buffer;

  /** `secret`: the server's session-signing secret; a key of its own is derived from it. */
  constructor(secret: string) {
    this.key = createHmac("sha256", secret).update("quire device cookie v1").digest();
  }

  private mac(username: string, id: string): Buffer {
    return createHmac("sha256", this.key).update(`${username.trim().toLowerCase()}\n${id}`).digest();
  }

  issue(username: string): string {
    const id = randomBytes(16).toString("base64url");
    return `v1.${id}.${this.mac(username, id).toString("base64url")}`;
  }

  /** The cookie's random id when it was issued for this username; undefined otherwise. */
  verify(cookie: string | undefined, username: string): string | undefined {
    const m = /^v1\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(cookie ?? "");
    if (!m) return undefined;
    const given = Buffer.from(m[2]!, "base64url");
    const expected = this.mac(username, m[1]!);
    return given.length === expected.length && timingSafeEqual(given, expected) ? m[1] : undefined;
  }
}
