import { newApiToken } from "../../domain/accounts.ts";
import { checkOutputParams } from "../output-format.ts";
import { webhookView } from "../webhook-view.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.webhook.rotate_secret`: a new secret, answered once; deliveries signed from now on use it
 * (attempts already under way keep the old one). An empty `ok` when the account has no webhook.
 */
export const webhookRotateSecret: ActionHandler = async ({ params, caller, deps, now }) => {
  checkOutputParams(params);
  const hook = await deps.store.webhooks.rotateSecret(caller.accountId, newApiToken(), now);
  return hook && webhookView(hook);
};
