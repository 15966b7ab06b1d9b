import { stackParams } from "../v2-schemas.ts";
import { json, notFound, V2Error, type V2Operation } from "../v2-operation.ts";
import { ownStack, stackAnswer, stackFields } from "../v2-stacks.ts";

/** `PATCH /v2/stacks/{stackId}`: any of title, description, accessType. */
export const stackUpdate: V2Operation = {
  method: "PATCH",
  url: "/stacks/:stackId",
  schema: { params: stackParams, body: { type: "object", properties: stackFields } },
  async handler(ctx) {
    const folder = await ownStack(ctx, ctx.params.stackId!);
    const written = await ctx.deps.store.folders.update(
      ctx.caller.accountId, folder.folderId,
      { name: ctx.body.title as string | undefined, description: ctx.body.description as string | undefined }, ctx.now,
    );
    if (!written.ok) {
      if (written.reason === "not-found") throw notFound();
      throw new V2Error(400, "A stack of this title exists", { fields: { title: { message: "is taken" } } });
    }
    if (ctx.body.accessType !== undefined) await ctx.deps.store.documentV2.setStackAccessType(ctx.caller.accountId, folder.folderId, ctx.body.accessType as string);
    return json(await stackAnswer(ctx, written.folder));
  },
};
