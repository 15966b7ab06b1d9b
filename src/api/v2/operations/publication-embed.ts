import { escapeText } from "../../../domain/escape-text.ts";
import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownPublication } from "../v2-documents.ts";
import { publicPath } from "../v2-views.ts";

const size = { anyOf: [{ type: "integer", minimum: 1, maximum: 10_000 }, { type: "string", pattern: "^[0-9]{1,5}(px|%)?$" }] } as const;

/**
 * `GET /v2/publications/{slug}/embed`: an iframe of the reader's embed page. `width`/`height` are
 * pixels or percentages (default 100%); `responsive` and the cosmetic options are accepted and
 * ignored (docs/api-v2.md).
 */
export const publicationEmbed: V2Operation = {
  method: "GET",
  url: "/publications/:slug/embed",
  schema: {
    params: slugParams,
    querystring: {
      type: "object",
      properties: {
        responsive: { type: "boolean" }, width: size, height: size, hideIssuuLogo: { type: "boolean" }, hideShareButton: { type: "boolean" },
        showOtherPublications: { type: "boolean" }, bgColor: { type: "string", maxLength: 20 }, fullScreenShareBgColor: { type: "string", maxLength: 20 },
      },
    },
  },
  async handler(ctx) {
    const doc = await ownPublication(ctx, ctx.params.slug!);
    const dim = (v: unknown) => (v === undefined ? "100%" : /^[0-9]+$/.test(String(v)) ? `${String(v)}` : String(v).replace(/px$/, ""));
    const src = `${ctx.origin}${publicPath(doc)}/embed`;
    const embed = `<iframe src="${escapeText(src)}" width="${escapeText(dim(ctx.query.width))}" height="${escapeText(dim(ctx.query.height))}" title="${escapeText(doc.title)}" style="border:0" allowfullscreen></iframe>`;
    return json({ embed });
  },
};
