import { invalid, QuireError } from "../../domain/errors.ts";
import type { Resource } from "../../domain/resource.ts";
import { readStatsRange } from "../../domain/stats-params.ts";
import { isValidDocumentName } from "../../domain/values.ts";
import type { StatsReport } from "../../store/statistics.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/** `revisionId-publicationId` (decisions §5). */
const DOCUMENT_ID_RE = /^[0-9]{12}-[0-9a-f]{32}$/;

/** A report as the envelope writes it: figures as attributes, days, referrers and pages as records. */
export function statsView(report: StatsReport, documentId: string): Resource {
  const t = report.totals;
  return {
    tag: "stats",
    fields: [
      ["documentId", documentId],
      ["from", report.range.from],
      ["to", report.range.to],
      ["impressions", t.impressions],
      ["views", t.views],
      ["embeddedViews", t.embeddedViews],
      ["reads", t.reads],
      ["averageTimeSpent", t.averageTimeSpent],
      ["downloads", t.downloads],
      ["shares", t.shares],
      ["clicks", t.clicks],
      ["days", { itemTag: "day", records: report.days.map((d) => ({
        date: d.day, impressions: d.impressions, views: d.views, embeddedViews: d.embeddedViews, reads: d.reads,
        averageTimeSpent: d.averageTimeSpent, downloads: d.downloads, shares: d.shares, clicks: d.clicks,
      })) }],
      ["referrers", { itemTag: "referrer", records: report.referrers.map((r) => ({ host: r.host, embedded: r.embedded, views: r.views })) }],
      ["pages", { itemTag: "page", records: report.depth.map((p) => ({ page: p.page, readers: p.readers, share: Math.round(p.share * 1000) / 1000 })) }],
    ],
  };
}

/**
 * `svc.documents.stats` (decisions §15): the readership figures of the caller's account, or of one
 * of its documents (`documentId` or `name`, not both), over `dateRange` or `from`/`to`. A document
 * that is not the caller's is 300, as everywhere else.
 */
export const documentsStats: ActionHandler = async ({ params, caller, deps, now }) => {
  const documentId = params.get("documentId") || undefined;
  const name = params.get("name") || undefined;
  if (documentId !== undefined && !DOCUMENT_ID_RE.test(documentId)) throw invalid("documentId");
  if (name !== undefined && (documentId !== undefined || !isValidDocumentName(name))) throw invalid("name");
  const range = readStatsRange(params.get, now);
  checkOutputParams(params);
  let target: string | undefined;
  if (documentId !== undefined || name !== undefined) {
    const doc = documentId !== undefined
      ? await deps.store.documents.getById(caller.accountId, documentId)
      : await deps.store.documents.getByNameOrId(caller.accountId, name!);
    if (!doc) throw new QuireError("300");
    target = doc.documentId;
  }
  const report = await deps.store.statistics.report({ accountId: caller.accountId, documentId: target, range });
  return statsView(report, target ?? "");
};
