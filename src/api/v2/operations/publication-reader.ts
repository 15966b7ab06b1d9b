import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownPublication } from "../v2-documents.ts";
import { publicPath } from "../v2-views.ts";

/** `GET /v2/publications/{slug}/reader`: the reader's share address. */
export const publicationReader: V2Operation = {
  method: "GET",
  url: "/publications/:slug/reader",
  schema: { params: slugParams },
  async handler(ctx) {
    const doc = await ownPublication(ctx, ctx.params.slug!);
    return json({ url: `${ctx.origin}${publicPath(doc)}` });
  },
};
