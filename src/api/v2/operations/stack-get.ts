import { stackParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownStack, stackAnswer } from "../v2-stacks.ts";

/** `GET /v2/stacks/{stackId}`. */
export const stackGet: V2Operation = {
  method: "GET",
  url: "/stacks/:stackId",
  schema: { params: stackParams },
  handler: async (ctx) => json(await stackAnswer(ctx, await ownStack(ctx, ctx.params.stackId!))),
};
