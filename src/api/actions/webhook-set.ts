import { newApiToken } from "../../domain/accounts.ts";
import { missing } from "../../domain/errors.ts";
import { parseWebhookEvents, parseWebhookUrl } from "../../domain/webhooks.ts";
import { checkOutputParams } from "../output-format.ts";
import { webhookView } from "../webhook-view.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.webhook.set` (decisions §12): the account's one webhook, created or changed. `url` follows
 * the rules of `slurpUrl` (a literal private address is 201 unless QUIRE_FETCH_ALLOW_PRIVATE=1);
 * `events` defaults to all three. A new webhook gets a new secret; a changed one keeps its own,
 * so its receivers keep verifying. Either way the answer carries it.
 */
export const webhookSet: ActionHandler = async ({ params, caller, deps, now }) => {
  const rawUrl = params.get("url");
  if (rawUrl === undefined) throw missing("url");
  const url = parseWebhookUrl(rawUrl, deps.config.fetchAllowPrivate);
  const events = parseWebhookEvents(params.get("events"));
  checkOutputParams(params);
  return webhookView(await deps.store.webhooks.set(caller.accountId, { url, events }, newApiToken(), now));
};
