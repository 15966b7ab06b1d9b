/**
 * Every kind of durable job, in one list: the jobs table's `kind` column is typed by it, the API
 * and the sweeper enqueue only these, and a worker refuses to start unless it has a handler for
 * each. A new kind (webhook delivery, OCR) is added here and gets its handler in the registry.
 */
export const JOB_KINDS = ["convert-document", "convert-pages", "webhook-delivery", "index-text", "publish-scheduled", "replace-file", "page-variants", "page-variants-remake"] as const;

export type JobKind = (typeof JOB_KINDS)[number];

/**
 * Converts an uploaded document (P) into its published form (A), or fails it (F). A document of
 * many pages is split into page ranges (CONVERT_PAGES) by it; once the last range is done it runs
 * again to publish what they made.
 */
export const CONVERT_DOCUMENT: JobKind = "convert-document";

/** Posts a document's pending webhook deliveries, oldest first (decisions §12). */
export const WEBHOOK_DELIVERY: JobKind = "webhook-delivery";

/**
 * Puts the stored text of a document published before the search index existed into the index
 * (queued by migration 0011; src/jobs/index-text.ts).
 */
export const INDEX_TEXT: JobKind = "index-text";

/** Renders, extracts and OCRs one page range of a split document (src/jobs/convert-pages.ts). */
export const CONVERT_PAGES: JobKind = "convert-pages";

/**
 * Makes every page's reading variants (WebP at each width, src/page-variants.ts) of a published
 * document ahead of its readers: `quire pages reencode` queues one per document (src/jobs/page-variants.ts).
 */
export const PAGE_VARIANTS: JobKind = "page-variants";

/**
 * PAGE_VARIANTS that also makes again the WebP variants stored before it was queued, from the
 * masters (`quire pages reencode --force`: variants of an earlier encoder replaced by today's).
 * A kind of its own because a job carries no arguments but its kind and document.
 */
export const PAGE_VARIANTS_REMAKE: JobKind = "page-variants-remake";

/** Publishes a v2 draft at its `scheduledTime` (decisions §14; src/jobs/publish-scheduled.ts). */
export const PUBLISH_SCHEDULED: JobKind = "publish-scheduled";

/**
 * Converts a published document's new file beside its pages, then switches the document to it
 * (src/jobs/replace-file.ts; src/domain/document-replacement.ts).
 */
export const REPLACE_FILE: JobKind = "replace-file";

/**
 * The page ranges a document of `pageCount` pages is split into, `rangePages` pages each (the last
 * may be shorter, never shorter than half a range: it is merged into the one before it then, since
 * a range's fixed cost — fetching the PDF, starting poppler — would be paid for a few pages).
 */
export function planPageRanges(pageCount: number, rangePages: number): Array<{ first: number; last: number }> {
  const size = Math.max(1, Math.floor(rangePages));
  const ranges: Array<{ first: number; last: number }> = [];
  for (let first = 1; first <= pageCount; first += size) ranges.push({ first, last: Math.min(pageCount, first + size - 1) });
  const tail = ranges.at(-1);
  const before = ranges.at(-2);
  if (tail && before && tail.last - tail.first + 1 < size / 2) {
    before.last = tail.last;
    ranges.pop();
  }
  return ranges;
}
