import { createHmac, timingSafeEqual } from "node:crypto";

/** How long a QR code's address stays valid (the hosted service says 7 days). */
export const QR_CODE_TTL_MS = 7 * 24 * 3600_000;

/**
 * A QR code's address carries what it encodes, signed with a key of this server's, so that
 * `/v2/qrcodes/…` draws only what a publication's owner asked for, and only for a week.
 */
export function qrCodeToken(key: string, pointedUrl: string, expiresAt: number): string {
  const body = Buffer.from(JSON.stringify({ u: pointedUrl, e: expiresAt })).toString("base64url");
  return `${body}.${createHmac("sha256", key).update(body).digest("base64url")}`;
}

export function readQrCodeToken(key: string, token: string, now: number): string | undefined {
  const [body, mac] = token.split(".");
  if (body === undefined || mac === undefined || body.length > 4096) return undefined;
  const want = createHmac("sha256", key).update(body).digest();
  const got = Buffer.from(mac, "base64url");
  if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { u?: unknown; e?: unknown };
    return typeof v.u === "string" && typeof v.e === "number" && v.e > now ? v.u : undefined;
  } catch {
    return undefined;
  }
}

/** The signing key: derived from the server's own secret (made once per database), never the secret itself. */
export function qrCodeKey(serverSecret: string): string {
  return createHmac("sha256", serverSecret).update("quire v2 qr codes").digest("hex");
}
