import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownPublication } from "../v2-documents.ts";
import { deleteOwnDocument } from "../v2-delete.ts";

/** `DELETE /v2/publications/{slug}`: as v1's `document.delete`. */
export const publicationDelete: V2Operation = {
  method: "DELETE",
  url: "/publications/:slug",
  schema: { params: slugParams },
  async handler(ctx) {
    await deleteOwnDocument(ctx, await ownPublication(ctx, ctx.params.slug!));
    return json({});
  },
};
