import { EMBED_SORT_FIELDS } from "../../store/embeds.ts";
import { EMBED_FIELDS, embedView } from "../embed-view.ts";
import { readListTail, resultList } from "../list-params.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document_embeds.list` (decisions §8): the caller's embeds, optionally of one document
 * (a document the caller does not have simply has none). `embedSortBy`: `id` (default),
 * `created`, `documentId`, `readerStartPage`, `width`, `height`; ties are broken by id.
 */
export const documentEmbedsList: ActionHandler = async (ctx) => {
  const documentId = ctx.params.get("documentId");
  const { sortBy, order, window, keep } = readListTail(ctx.params, { field: "embedSortBy", allowed: EMBED_SORT_FIELDS, fallback: "id" }, EMBED_FIELDS);
  const { totalCount, items } = await ctx.deps.store.embeds.list(ctx.caller.accountId, { documentId, sortBy, order, ...window });
  return resultList(items.map(embedView), totalCount, window, keep);
};
