import type { DocumentRecord } from "../../../domain/document.ts";
import { pagingQuery } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { paged, publicationView } from "../v2-views.ts";
import { pageOf } from "../v2-paging.ts";

/** How many of an account's drafts the `SCHEDULED` filter looks through. */
const SCHEDULED_SCAN = 1000;

/**
 * `GET /v2/publications`: the account's published documents, newest change first. `state`:
 * `ALL` and `PUBLISHED` list them all, `UNLISTED` the private ones, `SCHEDULED` the drafts whose
 * publish is scheduled. `q` filters titles and descriptions.
 */
export const publicationsList: V2Operation = {
  method: "GET",
  url: "/publications",
  cacheable: true,
  schema: {
    querystring: { type: "object", properties: { ...pagingQuery, state: { type: "string", enum: ["ALL", "PUBLISHED", "SCHEDULED", "UNLISTED"], default: "ALL" } } },
  },
  async handler(ctx) {
    const { page, size, offset, q } = pageOf(ctx.query);
    const state = ctx.query.state as string;
    const store = ctx.deps.store;
    let total: number;
    let records: DocumentRecord[];
    if (state === "SCHEDULED") {
      const drafts = await store.documents.list({ accountId: ctx.caller.accountId, drafts: true, text: q, sortBy: "publishDate", order: "desc", startIndex: 0, pageSize: SCHEDULED_SCAN });
      const rows = await store.documentV2.get(drafts.records.map((r) => r.documentId));
      const scheduled = drafts.records.filter((d) => rows.get(d.documentId)?.scheduledAt != null);
      total = scheduled.length;
      records = scheduled.slice(offset, offset + size);
    } else {
      const listed = await store.documents.list({
        accountId: ctx.caller.accountId, states: ["A"], text: q, sortBy: "publishDate", order: "desc", startIndex: offset, pageSize: size,
        ...(state === "UNLISTED" ? { access: "private" as const } : {}),
      });
      total = listed.totalCount;
      records = listed.records;
    }
    const ids = records.map((r) => r.documentId);
    const rows = await store.documentV2.get(ids);
    const replacing = await store.replacements.getMany(ids);
    return json(paged(ctx.origin, "publications", records.map((d) => publicationView(ctx.origin, d, rows.get(d.documentId), replacing.get(d.documentId))), page, size, total));
  },
};
