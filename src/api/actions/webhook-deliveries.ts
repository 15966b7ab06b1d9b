import { readPageSize, readResponseParams, readStartIndex, resultList } from "../list-params.ts";
import { checkOutputParams } from "../output-format.ts";
import { DELIVERY_FIELDS, deliveryView } from "../webhook-view.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.webhook.deliveries` (decisions §12): the account's recent deliveries, newest first, in a
 * `result` list of `delivery`; optional `documentId` (only that document's), `startIndex`,
 * `pageSize` (0-100, default 10), `responseParams`. Finished deliveries are kept 30 days.
 */
export const webhookDeliveries: ActionHandler = async ({ params, caller, deps }) => {
  const documentId = params.get("documentId");
  const window = { startIndex: readStartIndex(params.get), pageSize: readPageSize(params.get) };
  const keep = readResponseParams(params.get, DELIVERY_FIELDS);
  checkOutputParams(params);
  const { totalCount, items } = await deps.store.webhookDeliveries.list(caller.accountId, { documentId, ...window });
  return resultList(items.map(deliveryView), totalCount, window, keep);
};
