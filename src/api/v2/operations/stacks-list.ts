import { json, type V2Operation } from "../v2-operation.ts";
import { paged, stackView } from "../v2-views.ts";
import { pageOf } from "../v2-paging.ts";
import { pageQuery } from "../v2-schemas.ts";

/** `GET /v2/stacks`: the account's folders, oldest first; `showUnlisted` (default false) adds the UNLISTED ones. */
export const stacksList: V2Operation = {
  method: "GET",
  url: "/stacks",
  schema: {
    querystring: {
      type: "object",
      properties: {
        showUnlisted: { type: "boolean", default: false },
        ...pageQuery,
      },
    },
  },
  async handler(ctx) {
    const { page, size, offset } = pageOf(ctx.query);
    const { items } = await ctx.deps.store.folders.listPage(ctx.caller.accountId, { sortBy: "created", order: "asc", startIndex: 0, pageSize: Number.MAX_SAFE_INTEGER });
    const types = await ctx.deps.store.documentV2.stackAccessTypes(ctx.caller.accountId);
    const shown = items.filter((f) => ctx.query.showUnlisted === true || types.get(f.folderId) !== "UNLISTED");
    const results = shown.slice(offset, offset + size).map((f) => stackView(f, types.get(f.folderId)));
    return json(paged(ctx.origin, "stacks", results, page, size, shown.length));
  },
};
