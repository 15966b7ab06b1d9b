import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { draftAnswer } from "../v2-documents.ts";

/** `GET /v2/drafts/{slug}`: the document in any state (clients poll it for `fileInfo.conversionStatus`). */
export const draftGet: V2Operation = {
  method: "GET",
  url: "/drafts/:slug",
  cacheable: true,
  schema: { params: slugParams },
  handler: async (ctx) => json(await draftAnswer(ctx, ctx.params.slug!)),
};
