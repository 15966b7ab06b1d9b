import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownDocument } from "../v2-documents.ts";
import { deleteOwnDocument } from "../v2-delete.ts";

/** `DELETE /v2/drafts/{slug}`: the document, its jobs and files, as v1's `document.delete` does. */
export const draftDelete: V2Operation = {
  method: "DELETE",
  url: "/drafts/:slug",
  schema: { params: slugParams },
  async handler(ctx) {
    await deleteOwnDocument(ctx, await ownDocument(ctx, ctx.params.slug!));
    return json({});
  },
};
