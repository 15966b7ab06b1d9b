import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DocumentRecord } from "../../domain/document.ts";
import { ALL_TIME_FROM, daysOf, lastDays, namedRange, type DayRange } from "../../domain/statistics.ts";
import type { StatsReport, StatTotals } from "../../store/statistics.ts";
import { docPath } from "../document-paths.ts";
import { html, type Html } from "../html.ts";
import { PUBLISHER_COOKIE, publisherCookieValue } from "../stats-routes.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { APP_BASE, sendAppPage } from "./app-layout.ts";
import { SESSION_LIFETIME_MS } from "./session-store.ts";

/** `revisionId-publicationId` (decisions §5). */
const DOCUMENT_ID_RE = /^[0-9]{12}-[0-9a-f]{32}$/;

/** The ranges the pages offer, by their `range` query value; the first is the default. */
const RANGES = [
  { key: "30d", label: "Last 30 days" },
  { key: "thisMonth", label: "This month" },
  { key: "lastMonth", label: "Last month" },
  { key: "12m", label: "Last 12 months" },
  { key: "maxTime", label: "All time" },
] as const;
type RangeKey = (typeof RANGES)[number]["key"];

function rangeOf(key: RangeKey, now: number): DayRange {
  if (key === "30d") return lastDays(30, now);
  if (key === "12m") return lastDays(365, now);
  return namedRange(key, now);
}

const number = new Intl.NumberFormat("en");
const percent = new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 0 });
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function summary(t: StatTotals): Html {
  const items: Array<[string, string]> = [
    ["Views", number.format(t.views)],
    ["Reads", number.format(t.reads)],
    ["Average time spent", duration(t.averageTimeSpent)],
    ["Impressions", number.format(t.impressions)],
    ["Embedded views", number.format(t.embeddedViews)],
    ["Downloads", number.format(t.downloads)],
    ["Shares", number.format(t.shares)],
    ["Links followed", number.format(t.clicks)],
  ];
  return html`<dl class="stats-summary">${items.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`;
}

/** Every day of the range (from the first counted day for "all time"), zeros included: the chart's data, as a table. */
function daysTable(report: StatsReport): Html {
  const byDay = new Map(report.days.map((d) => [d.day, d]));
  // "All time" starts at the first day anything was counted.
  const from = report.range.from === ALL_TIME_FROM ? (report.days[0]?.day ?? report.range.to) : report.range.from;
  const days = daysOf({ from, to: report.range.to });
  return html`<figure class="stats-figure">
<figcaption id="days-caption">Views and reads by day</figcaption>
<div class="stats-chart" data-chart="days" data-table="days-table" aria-hidden="true"></div>
<details class="stats-table"${days.length <= 31 ? html` open` : ""}>
<summary>The figures by day, as a table</summary>
<table id="days-table" class="stats-days" aria-labelledby="days-caption">
<thead><tr><th scope="col">Day</th><th scope="col">Views</th><th scope="col">Reads</th><th scope="col">Impressions</th><th scope="col">Average time</th><th scope="col">Downloads</th></tr></thead>
<tbody>
${days.map((day) => {
    const d = byDay.get(day);
    return html`<tr><th scope="row">${day}</th><td data-label="Views">${d?.views ?? 0}</td><td data-label="Reads">${d?.reads ?? 0}</td><td data-label="Impressions">${d?.impressions ?? 0}</td><td data-label="Average time">${duration(d?.averageTimeSpent ?? 0)}</td><td data-label="Downloads">${d?.downloads ?? 0}</td></tr>`;
  })}
</tbody>
</table>
</details>
</figure>`;
}

function depthTable(report: StatsReport): Html {
  if (report.depth.length === 0) return html``;
  return html`<h2 id="depth-heading">How far readers got</h2>
<figure class="stats-figure">
<figcaption id="depth-caption">Share of readers who reached each page</figcaption>
<div class="stats-chart" data-chart="depth" data-table="depth-table" aria-hidden="true"></div>
<details class="stats-table"${report.depth.length <= 20 ? html` open` : ""}>
<summary>Readers by page, as a table</summary>
<table id="depth-table" aria-labelledby="depth-caption">
<thead><tr><th scope="col">Page</th><th scope="col">Readers who reached it</th><th scope="col">Share</th></tr></thead>
<tbody>
${report.depth.map((d) => html`<tr><th scope="row">${d.page}</th><td>${d.readers}</td><td data-value="${d.share.toFixed(4)}">${percent.format(d.share)}</td></tr>`)}
</tbody>
</table>
</details>
</figure>`;
}

function referrersTable(report: StatsReport): Html {
  return html`<h2>Where readers came from</h2>
${report.referrers.length === 0
    ? html`<p>No view in this period.</p>`
    : html`<table class="stats-list">
<thead><tr><th scope="col">Site</th><th scope="col">Through</th><th scope="col">Views</th></tr></thead>
<tbody>
${report.referrers.map((r) => html`<tr><td>${r.host || "Direct, or not said"}</td><td>${r.embedded ? "Embedded reader" : "Reader page"}</td><td>${number.format(r.views)}</td></tr>`)}
</tbody>
</table>`}`;
}

function topTable(report: StatsReport, range: RangeKey): Html {
  const months = report.months.from === report.months.to ? report.months.from : `${report.months.from} to ${report.months.to}`;
  return html`<h2>Top documents</h2>
<p class="stats-period">By views over the whole months this period touches (${report.range.from === ALL_TIME_FROM ? "all of them" : months}).</p>
${report.topDocuments.length === 0
    ? html`<p>No document was viewed in this period.</p>`
    : html`<table class="stats-list">
<thead><tr><th scope="col">Document</th><th scope="col">Views</th><th scope="col">Reads</th><th scope="col">Average time</th><th scope="col">Impressions</th></tr></thead>
<tbody>
${report.topDocuments.map((d) => html`<tr><td><a href="${APP_BASE}/statistics/${d.documentId}?range=${range}">${d.title}</a></td><td>${number.format(d.views)}</td><td>${number.format(d.reads)}</td><td>${duration(d.averageTimeSpent)}</td><td>${number.format(d.impressions)}</td></tr>`)}
</tbody>
</table>`}`;
}

function rangeNav(base: string, current: RangeKey): Html {
  return html`<nav class="stats-ranges" aria-label="Period">
<ul>${RANGES.map((r) => html`<li><a href="${base}?range=${r.key}"${r.key === current ? html` aria-current="true"` : ""}>${r.label}</a></li>`)}</ul>
</nav>`;
}

function statsPage(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, v: { report: StatsReport; range: RangeKey; doc?: DocumentRecord }) {
  const { report, range, doc } = v;
  const base = doc ? `${APP_BASE}/statistics/${doc.documentId}` : `${APP_BASE}/statistics`;
  return sendAppPage(ctx, req, reply, { title: doc ? `Statistics: ${doc.title}` : "Statistics", section: "statistics", scripts: [ctx.assets.uplotJs, ctx.assets.appStatsJs] }, () => html`<link rel="stylesheet" href="${ctx.assets.uplotCss.url}">
<link rel="stylesheet" href="${ctx.assets.appStatsCss.url}">
${doc && html`<p><a href="${APP_BASE}/statistics?range=${range}">← All statistics</a></p>`}
<h1>${doc ? html`Statistics: ${doc.title}` : "Statistics"}</h1>
${doc && html`<p class="stats-doc-links"><a href="${docPath(doc)}">Open the reader</a> · <a href="${APP_BASE}/documents/${doc.documentId}">Edit the document</a></p>`}
${rangeNav(base, range)}
<p class="stats-period">From ${report.range.from === ALL_TIME_FROM ? "the start" : report.range.from} to ${report.range.to} (UTC days). Readers are counted once a day per document; your own views are not counted.</p>
${summary(report.totals)}
${daysTable(report)}
${depthTable(report)}
${!doc && topTable(report, range)}
${referrersTable(report)}`);
}

const rangeKeyOf = (req: FastifyRequest): RangeKey => {
  const asked = field(req.query, "range");
  return RANGES.find((r) => r.key === asked)?.key ?? "30d";
};

/**
 * The account's statistics and each document's (decisions §15, issue 24). Also marks the signed-in
 * publisher's browser (PUBLISHER_COOKIE) on every page of the app, so that their own views of their
 * documents are not counted.
 */
export async function registerStatisticsPage(scope: FastifyInstance, ctx: AppContext): Promise<void> {
  const secret = await ctx.store.appSessions.cookieSecret();
  scope.addHook("preHandler", async (req, reply) => {
    const account = req.appAccount;
    if (!account) return;
    const value = publisherCookieValue(secret, account.id);
    if (req.cookies[PUBLISHER_COOKIE] === value) return;
    reply.setCookie(PUBLISHER_COOKIE, value, { path: "/", httpOnly: true, sameSite: "lax", secure: "auto", maxAge: SESSION_LIFETIME_MS / 1000 });
  });

  scope.get("/statistics", async (req, reply) => {
    const range = rangeKeyOf(req);
    const report = await ctx.store.statistics.report({ accountId: accountOf(req).id, range: rangeOf(range, Date.now()) });
    return statsPage(ctx, req, reply, { report, range });
  });

  scope.get<{ Params: { documentId: string } }>("/statistics/:documentId", async (req, reply) => {
    const { documentId } = req.params;
    const account = accountOf(req);
    const doc = DOCUMENT_ID_RE.test(documentId) ? await ctx.store.documents.getById(account.id, documentId) : undefined;
    if (!doc) {
      return sendAppPage(ctx, req, reply, { title: "Document not found", section: "statistics" }, () => html`<h1>Document not found</h1>
<p>This document does not exist, or no longer does. <a href="${APP_BASE}/statistics">Back to your statistics</a>.</p>`, 404);
    }
    const range = rangeKeyOf(req);
    const report = await ctx.store.statistics.report({ accountId: account.id, documentId: doc.documentId, range: rangeOf(range, Date.now()) });
    return statsPage(ctx, req, reply, { report, range, doc });
  });
}
