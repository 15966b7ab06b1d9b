import { stackParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownStack } from "../v2-stacks.ts";

/** `DELETE /v2/stacks/{stackId}`: the folder; its documents stay (as v1's `folder.delete`). */
export const stackDelete: V2Operation = {
  method: "DELETE",
  url: "/stacks/:stackId",
  schema: { params: stackParams },
  async handler(ctx) {
    const folder = await ownStack(ctx, ctx.params.stackId!);
    await ctx.deps.store.folders.deleteMany(ctx.caller.accountId, [folder.folderId]);
    return json({});
  },
};
