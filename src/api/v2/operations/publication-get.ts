import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownPublication, publicationAnswer } from "../v2-documents.ts";

/** `GET /v2/publications/{slug}`: a published document (same slug as the draft it was). */
export const publicationGet: V2Operation = {
  method: "GET",
  url: "/publications/:slug",
  cacheable: true,
  schema: { params: slugParams },
  handler: async (ctx) => json(await publicationAnswer(ctx, await ownPublication(ctx, ctx.params.slug!))),
};
