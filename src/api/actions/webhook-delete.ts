import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.webhook.delete`: empty `ok`, whether there was one or not (deleting is idempotent).
 * Deliveries not yet made end failed ("The webhook was removed.") when their turn comes.
 */
export const webhookDelete: ActionHandler = async ({ params, caller, deps }) => {
  checkOutputParams(params);
  await deps.store.webhooks.delete(caller.accountId);
  return undefined;
};
