import type { ActionHandler } from "./action.ts";
import { webhookDeliveries } from "./webhook-deliveries.ts";
import { webhookDelete } from "./webhook-delete.ts";
import { webhookGet } from "./webhook-get.ts";
import { webhookRotateSecret } from "./webhook-rotate-secret.ts";
import { webhookSet } from "./webhook-set.ts";

/** The webhook operations (decisions §12), by name without prefix (registered in index.ts). */
export const WEBHOOK_ACTIONS: ReadonlyArray<readonly [string, ActionHandler]> = [
  ["webhook.set", webhookSet],
  ["webhook.get", webhookGet],
  ["webhook.delete", webhookDelete],
  ["webhook.rotate_secret", webhookRotateSecret],
  ["webhook.deliveries", webhookDeliveries],
];
