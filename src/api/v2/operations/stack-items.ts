import { pageQuery, stackParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownStack } from "../v2-stacks.ts";
import { paged } from "../v2-views.ts";
import { pageOf } from "../v2-paging.ts";

/** `GET /v2/stacks/{stackId}/items`: slugs of the published documents in the stack, oldest placement first. */
export const stackItems: V2Operation = {
  method: "GET",
  url: "/stacks/:stackId/items",
  schema: {
    params: stackParams,
    querystring: {
      type: "object",
      properties: {
        includeUnlisted: { type: "boolean", default: true },
        ...pageQuery,
      },
    },
  },
  async handler(ctx) {
    const folder = await ownStack(ctx, ctx.params.stackId!);
    const { page, size, offset } = pageOf(ctx.query);
    const items = await ctx.deps.store.documentV2.stackItems(ctx.caller.accountId, folder.folderId, ctx.query.includeUnlisted !== false, offset, size);
    return json(paged(ctx.origin, `stacks/${encodeURIComponent(folder.folderId)}/items`, items.documentIds, page, size, items.totalCount));
  },
};
