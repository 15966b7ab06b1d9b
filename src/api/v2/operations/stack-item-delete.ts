import { json, type V2Operation } from "../v2-operation.ts";
import { ownStack } from "../v2-stacks.ts";

/** `DELETE /v2/stacks/{stackId}/items/{slug}`: the document leaves the stack (its bookmarks there go); it stays published. */
export const stackItemDelete: V2Operation = {
  method: "DELETE",
  url: "/stacks/:stackId/items/:slug",
  schema: {
    params: {
      type: "object",
      properties: { stackId: { type: "string", minLength: 1, maxLength: 100 }, slug: { type: "string", minLength: 1, maxLength: 100 } },
      required: ["stackId", "slug"],
    },
  },
  async handler(ctx) {
    const folder = await ownStack(ctx, ctx.params.stackId!);
    const ids = await ctx.deps.store.documentV2.stackItemBookmarks(ctx.caller.accountId, folder.folderId, ctx.params.slug!);
    if (ids.length > 0) await ctx.deps.store.bookmarks.deleteMany(ctx.caller.accountId, ids);
    return json({});
  },
};
