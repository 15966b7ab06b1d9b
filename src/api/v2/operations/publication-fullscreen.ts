import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownPublication } from "../v2-documents.ts";
import { fullscreenSettings, fullscreenUrl } from "../v2-share.ts";

/** `POST /v2/publications/{slug}/fullscreen`: a share link to the reader (its start page honoured). */
export const publicationFullscreen: V2Operation = {
  method: "POST",
  url: "/publications/:slug/fullscreen",
  schema: { params: slugParams, body: fullscreenSettings },
  async handler(ctx) {
    const doc = await ownPublication(ctx, ctx.params.slug!);
    return json({ url: fullscreenUrl(ctx.origin, doc, ctx.body) });
  },
};
