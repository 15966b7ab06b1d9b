import { readStatsRange } from "../../../domain/stats-params.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownDocument } from "../v2-documents.ts";

/**
 * `GET /v2/stats`: the account's readership (decisions §15), or one publication's with `slug`,
 * over `dateRange` (`thisMonth`, `lastMonth`, `maxTime`; v2's default is `maxTime`), from the
 * same report as v1's `svc.documents.stats`. `averageTimeSpent` is in seconds, over reads.
 */
export const stats: V2Operation = {
  method: "GET",
  url: "/stats",
  schema: {
    querystring: {
      type: "object",
      properties: { dateRange: { type: "string", enum: ["thisMonth", "lastMonth", "maxTime"], default: "maxTime" }, slug: { type: "string", minLength: 1, maxLength: 100 } },
    },
  },
  async handler(ctx) {
    const range = readStatsRange((name) => (name === "dateRange" ? (ctx.query.dateRange as string) : undefined), ctx.now);
    const slug = ctx.query.slug as string | undefined;
    const documentId = slug !== undefined ? (await ownDocument(ctx, slug)).documentId : undefined;
    const { totals } = await ctx.deps.store.statistics.report({ accountId: ctx.caller.accountId, ...(documentId !== undefined ? { documentId } : {}), range });
    return json({
      averageTimeSpent: totals.averageTimeSpent,
      clicks: totals.clicks,
      impressions: totals.impressions,
      reads: totals.reads,
      downloads: totals.downloads,
      shares: totals.shares,
    });
  },
};
