import { pagingQuery } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { documentV2View, paged } from "../v2-views.ts";
import { pageOf } from "../v2-paging.ts";

/** `GET /v2/drafts`: the account's unpublished drafts, newest change first; `q` filters titles and descriptions. */
export const draftsList: V2Operation = {
  method: "GET",
  url: "/drafts",
  cacheable: true,
  schema: { querystring: { type: "object", properties: pagingQuery } },
  async handler(ctx) {
    const { page, size, offset, q } = pageOf(ctx.query);
    const { totalCount, records } = await ctx.deps.store.documents.list({
      accountId: ctx.caller.accountId, drafts: true, text: q, sortBy: "publishDate", order: "desc", startIndex: offset, pageSize: size,
    });
    const rows = await ctx.deps.store.documentV2.get(records.map((r) => r.documentId));
    return json(paged(ctx.origin, "drafts", records.map((d) => documentV2View(ctx.origin, d, rows.get(d.documentId))), page, size, totalCount));
  },
};
