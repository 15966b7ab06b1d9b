import { randomUUID } from "node:crypto";
import { stackParams } from "../v2-schemas.ts";
import { json, V2Error, type V2Operation } from "../v2-operation.ts";
import { ownStack } from "../v2-stacks.ts";
import { ownDocument } from "../v2-documents.ts";

/**
 * `POST /v2/stacks/{stackId}/items` `{slug}`: a published document of the account into the stack
 * (a bookmark at page 1 in the folder, as v1 shows folder items). Adding it twice changes nothing.
 */
export const stackItemAdd: V2Operation = {
  method: "POST",
  url: "/stacks/:stackId/items",
  schema: { params: stackParams, body: { type: "object", properties: { slug: { type: "string", minLength: 1, maxLength: 100 } }, required: ["slug"] } },
  async handler(ctx) {
    const folder = await ownStack(ctx, ctx.params.stackId!);
    const doc = await ownDocument(ctx, ctx.body.slug as string);
    if (doc.draft === true || doc.state !== "A") throw new V2Error(400, "Only published documents can be added to a stack", { fields: { slug: { message: "is not published" } } });
    const store = ctx.deps.store;
    if ((await store.documentV2.stackItemBookmarks(ctx.caller.accountId, folder.folderId, doc.documentId)).length === 0) {
      const target = await store.bookmarks.findBookmarkable(ctx.caller.accountId, doc.username, doc.documentId);
      if (target) await store.bookmarks.add(ctx.caller.accountId, randomUUID(), target, 1, [folder.folderId], ctx.now);
    }
    return json({});
  },
};
