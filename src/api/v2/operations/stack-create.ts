import { randomUUID } from "node:crypto";
import { json, V2Error, type V2Operation } from "../v2-operation.ts";
import { stackFields } from "../v2-stacks.ts";

/**
 * `POST /v2/stacks`: a folder (same rules as v1's `folder.add`); answers its id as a bare JSON string.
 * Without an accessType it is UNLISTED: a folder's name reaches the public profile only when asked.
 */
export const stackCreate: V2Operation = {
  method: "POST",
  url: "/stacks",
  schema: { body: { type: "object", properties: stackFields, required: ["title"] } },
  async handler(ctx) {
    const folderId = randomUUID();
    const written = await ctx.deps.store.folders.create(
      ctx.caller.accountId, folderId, { name: ctx.body.title as string, description: (ctx.body.description as string | undefined) ?? "" }, ctx.now,
    );
    if (!written.ok) throw new V2Error(400, "A stack of this title exists", { fields: { title: { message: "is taken" } } });
    await ctx.deps.store.documentV2.setStackAccessType(ctx.caller.accountId, folderId, (ctx.body.accessType as string | undefined) ?? "UNLISTED");
    return json(folderId);
  },
};
