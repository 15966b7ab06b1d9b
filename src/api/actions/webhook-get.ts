import { checkOutputParams } from "../output-format.ts";
import { webhookView } from "../webhook-view.ts";
import type { ActionHandler } from "./action.ts";

/** `svc.webhook.get`: the account's webhook without its secret; an empty `ok` when it has none. */
export const webhookGet: ActionHandler = async ({ params, caller, deps }) => {
  checkOutputParams(params);
  const hook = await deps.store.webhooks.get(caller.accountId);
  return hook && webhookView(hook);
};
