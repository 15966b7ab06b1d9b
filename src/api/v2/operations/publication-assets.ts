import { IMAGE_EXTENSION } from "../../../domain/page-images.ts";
import { pageQuery, slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownPublication } from "../v2-documents.ts";
import { paged, publicPath } from "../v2-views.ts";
import { pageOf } from "../v2-paging.ts";

/**
 * `GET /v2/publications/{slug}/assets`: per page, its images (thumbnail and reading size) and its
 * text, as addresses of the public reader's files, which load as the reader's do.
 */
export const publicationAssets: V2Operation = {
  method: "GET",
  url: "/publications/:slug/assets",
  schema: {
    params: slugParams,
    querystring: {
      type: "object",
      properties: {
        ...pageQuery,
        assetType: { type: "string", maxLength: 40 },
        documentPageNumber: { type: "integer", minimum: 1 },
        continuation: { type: "string", maxLength: 200 },
      },
    },
  },
  async handler(ctx) {
    const doc = await ownPublication(ctx, ctx.params.slug!);
    const { page, size, offset } = pageOf(ctx.query);
    const base = `${ctx.origin}${publicPath(doc)}`;
    const one = ctx.query.documentPageNumber as number | undefined;
    const numbers = one !== undefined ? (one <= doc.pageCount ? [one] : []) : Array.from({ length: Math.max(0, Math.min(size, doc.pageCount - offset)) }, (_, i) => offset + i + 1);
    const results = numbers.map((n) => ({
      pageNumber: n,
      assets: {
        image: { thumb: `${base}/pages/thumb/${n}.${IMAGE_EXTENSION}`, read: `${base}/pages/read/${n}.${IMAGE_EXTENSION}` },
        text: { json: `${base}/text/${n}.json` },
      },
    }));
    return json(paged(ctx.origin, `publications/${encodeURIComponent(doc.documentId)}/assets`, results, page, size, one !== undefined ? results.length : doc.pageCount));
  },
};
