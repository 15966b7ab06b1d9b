import { formatDate } from "../domain/values.ts";
import type { WebhookEvent } from "../domain/webhooks.ts";
import type { Delivery } from "../store/webhook-deliveries.ts";
import type { Resource } from "./payload.ts";

/** A `webhook` (decisions §12); its `secret` only where it is answered (set, rotate_secret). */
export function webhookView(w: { url: string; events: readonly WebhookEvent[]; secret?: string }): Resource {
  return {
    tag: "webhook",
    fields: [
      ["url", w.url],
      ["events", { list: w.events, itemTag: "event", itemAttr: "name" }],
      ...(w.secret !== undefined ? [["secret", w.secret] as const] : []),
    ],
  };
}

/** One line of `svc.webhook.deliveries`: the fields of decisions §12, its id (the `Quire-Delivery` header) and why the last attempt failed. */
export function deliveryView(d: Delivery): Resource {
  return {
    tag: "delivery",
    fields: [
      ["deliveryId", d.deliveryId],
      ["event", d.event],
      ["documentId", d.documentId],
      ["status", d.status],
      ["attempts", d.attempts],
      ["created", formatDate(Number(d.createdAt))],
      ["delivered", d.deliveredAt === null ? "" : formatDate(Number(d.deliveredAt))],
      ["lastError", d.lastError],
    ],
  };
}

export const DELIVERY_FIELDS = ["deliveryId", "event", "documentId", "status", "attempts", "created", "delivered", "lastError"];
