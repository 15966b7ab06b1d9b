import { createHmac } from "node:crypto";

/**
 * The `Quire-Signature` header of a delivery (decisions §12): `t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<body>" with the webhook's secret>`. The time is signed with the body, so a
 * receiver that refuses old times cannot be fed a recorded delivery again.
 */
export function webhookSignature(secret: string, body: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest("hex");
  return `t=${t},v1=${v1}`;
}
