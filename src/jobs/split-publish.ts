/**
 * The last step of a document split into page ranges: their texts put together into the document's
 * one text (bounded as a whole), its description, and P -> A through the same guarded transaction
 * as any document. Run by the document's own job kind, enqueued by the range that was done last.
 */
import { Readable } from "node:stream";
import { text as readAll } from "node:stream/consumers";
import { blobKeys } from "../blobs/blob-keys.ts";
import { DEFAULT_TEXT_BOUNDS } from "../convert/pdf-text.ts";
import { summarize, type PageText } from "../convert/pdf-pages.ts";
import type { DocumentRecord } from "../domain/document.ts";
import { JobFailure } from "../domain/job-failure.ts";
import type { PageFanout } from "../store/page-ranges.ts";
import { publish, type ConvertDeps } from "./conversion-steps.ts";
import type { JobOutcome } from "./job-registry.ts";

export async function publishSplit(deps: ConvertDeps, doc: DocumentRecord, split: PageFanout, signal: AbortSignal): Promise<JobOutcome> {
  const ranges = await deps.store.pageRanges.ranges(doc.documentId);
  const pages: PageText[] = [];
  for (const r of ranges) {
    const got = JSON.parse(await readAll(await deps.blobs.get(blobKeys.rangeText(doc.blobId, r.firstPage)))) as PageText[];
    pages.push(...got.filter((p) => p.page >= r.firstPage && p.page <= r.lastPage));
  }
  // Each page once, in order: anything else is a bug of ours, never published.
  if (pages.length !== split.pageCount || pages.some((p, i) => p.page !== i + 1)) {
    throw new JobFailure("internal", "The pages of the document could not be put together.", { detail: `${pages.length} page texts for ${split.pageCount} pages` });
  }
  const text = boundDocumentText(pages, (deps.textBounds ?? DEFAULT_TEXT_BOUNDS).maxDocumentChars);
  await deps.blobs.put(blobKeys.text(doc.blobId), Readable.from([JSON.stringify(text)]));
  signal.throwIfAborted();
  const published = await publish(deps, doc, {
    pageCount: split.pageCount,
    coverWidth: split.coverWidth,
    coverHeight: split.coverHeight,
    description: doc.descriptionGiven ? undefined : summarize(text),
  }, text);
  if (!published) return "skipped";
  await deps.store.pageRanges.forget(doc.documentId);
  // Only the document's one text is read from now on.
  await Promise.allSettled(ranges.map((r) => deps.blobs.delete(blobKeys.rangeText(doc.blobId, r.firstPage))));
  return "success";
}

/**
 * The document's bound on text applied across its ranges, as pdftotext's reader applies it to a
 * whole document: words are kept in page order while they fit (each costs its length and a space).
 * A page cut short keeps its first words, on one line.
 */
export function boundDocumentText(pages: readonly PageText[], maxDocumentChars: number): PageText[] {
  let left = maxDocumentChars;
  return pages.map((p) => {
    const cost = p.words.reduce((n, w) => n + w.text.length + 1, 0);
    if (cost <= left) {
      left -= cost;
      return p;
    }
    const words = [];
    for (const w of p.words) {
      if (w.text.length + 1 > left) continue;
      left -= w.text.length + 1;
      words.push(w);
    }
    return { page: p.page, text: words.map((w) => w.text).join(" "), words };
  });
}
