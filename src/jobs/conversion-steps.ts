/**
 * What the conversion jobs share: their dependencies, the page step (images, covers, text, OCR) of a
 * whole document or of one page range, and publishing (P -> A through the store's guarded
 * transaction). convert-document.ts runs a document whole or splits it; convert-pages.ts runs a range.
 */
import { createReadStream } from "node:fs";
import { extname, join } from "node:path";
import type { Logger } from "pino";
import { pageVariants } from "../page-variants.ts";
import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import type { FetchOptions } from "../convert/fetch-url.ts";
import type { OfficeConverter } from "../convert/office-to-pdf.ts";
import { recognizePages, type OcrSettings } from "../convert/page-ocr.ts";
import { extractText, renderCovers, renderPages, type PageSize, type PageText, type PdfLimits, type RenderedPage } from "../convert/pdf-pages.ts";
import type { TextBounds } from "../convert/pdf-text.ts";
import type { DocumentRecord } from "../domain/document.ts";
import type { DiskSpace } from "../blobs/disk-space.ts";
import { JobFailure, machineFaultOf } from "../domain/job-failure.ts";
import { nameBaseFromTitle, nameCandidates } from "../domain/document-name.ts";
import type { Store } from "../store/open-store.ts";

export interface ConvertDeps {
  store: Store;
  blobs: BlobStore;
  office: Pick<OfficeConverter, "convert">;
  log: Logger;
  /** Scratch space for one conversion; removed when it ends, whatever happens. */
  tmpDir: string;
  /**
   * The data disk (blob and temp folders): while it is short of space a conversion waits instead
   * of starting, and a converter's failure is the disk's, never the document's (issue 23 item 0d).
   */
  diskSpace?: Pick<DiskSpace, "shortage">;
  fetch: Omit<FetchOptions, "signal">;
  pdfLimits: PdfLimits;
  /** Text kept per page and per document (QUIRE_TEXT_MAX_*); the defaults when unset. */
  textBounds?: TextBounds;
  /** Without `thumb` (the worker's), thumbnails are made from the reading size when first asked for. */
  pageWidths: { thumb?: number; read: number };
  /** Pages without a usable text layer are read by Tesseract with these settings. */
  ocr: OcrSettings;
  /** pdftoppm processes one conversion (or range) runs at once (QUIRE_RENDER_PROCESSES); the renderer's default when unset. */
  renderProcesses?: number;
  /**
   * A document of more than `minPages` pages is split into page-range jobs of `rangePages` pages
   * that any worker may take (QUIRE_FANOUT_MIN_PAGES, QUIRE_FANOUT_RANGE_PAGES); unset, never.
   */
  fanout?: { minPages: number; rangePages: number };
}

const DISK_FULL_MESSAGE = "The server's disk is full; the conversion waits for space.";

/** Throws a disk-full failure (retried while the disk stays full) when the data disk is short of space now. */
export async function assertDiskRoom(deps: Pick<ConvertDeps, "diskSpace">): Promise<void> {
  const shortage = await deps.diskSpace?.shortage();
  if (shortage !== undefined) throw new JobFailure("internal", DISK_FULL_MESSAGE, { machineFault: "disk-full", detail: shortage });
}

/**
 * What a conversion's failure is to be recorded as: a converter that failed while the data disk
 * is short of space (LibreOffice's "PDF export failed", a poppler or Tesseract run that could not
 * write) failed for the disk, never for the document. An abort (time limit, lost lease) stays what it is.
 */
export async function diskFullOr(deps: Pick<ConvertDeps, "diskSpace">, err: unknown, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted || machineFaultOf(err) !== undefined) return err;
  const shortage = await deps.diskSpace?.shortage().catch(() => undefined);
  if (shortage === undefined) return err;
  return new JobFailure("internal", DISK_FULL_MESSAGE, { machineFault: "disk-full", detail: shortage, cause: err });
}

export async function putFile(blobs: BlobStore, key: string, path: string): Promise<void> {
  await blobs.put(key, createReadStream(path));
}

export interface PageStepInput {
  doc: DocumentRecord;
  pdf: string;
  /** Every page's displayed size (the inspection's). */
  sizes: readonly PageSize[];
  /** The pages to do; the whole document when unset. */
  range?: { first: number; last: number };
  textLayerIsOurs: boolean;
  /** Scratch folder of this run (the caller removes it). */
  work: string;
  signal: AbortSignal;
  /** Told the number of pages (of `range`) whose images are stored, as it grows. */
  onPagesStored?: (n: number) => void;
}

/**
 * The page step: every page (of the range) rendered at both widths and stored as soon as it exists,
 * the covers when page 1 is among them, then the text with OCR where the text layer is unusable.
 * On a failed render the images already stored are removed: a document that cannot be rendered
 * keeps none of its pages.
 */
export async function runPageStep(deps: ConvertDeps, input: PageStepInput): Promise<{ text: PageText[]; covers?: { width: number; height: number } }> {
  const { doc, pdf, work, signal, range } = input;
  const uploads: Promise<void>[] = [];
  const uploaded: string[] = [];
  let pagesStored = 0;
  const onPage = (p: RenderedPage) => {
    const key = blobKeys.page(doc.blobId, p.page, p.size, extname(p.path).slice(1));
    const upload = putFile(deps.blobs, key, p.path).then(() => {
      uploaded.push(key);
      if (p.size === "read") input.onPagesStored?.(++pagesStored);
    });
    upload.catch(() => undefined); // reported by the Promise.all below, not as an unhandled rejection
    uploads.push(upload);
  };
  const rendered = await renderPages(pdf, join(work, "pages"), {
    widths: deps.pageWidths, limits: deps.pdfLimits, signal, onPage, processes: deps.renderProcesses, firstPage: range?.first, lastPage: range?.last,
  }).catch(async (err: unknown) => {
    await Promise.allSettled(uploads);
    await Promise.allSettled(uploaded.map((key) => deps.blobs.delete(key)));
    throw err;
  });
  await Promise.all(uploads);
  let covers: { width: number; height: number } | undefined;
  if ((range?.first ?? 1) === 1) {
    const made = await renderCovers(pdf, join(work, "covers"), deps.pdfLimits, rendered.find((p) => p.page === 1 && p.size === "read"));
    for (const size of ["small", "medium", "large"] as const) {
      await putFile(deps.blobs, blobKeys.cover(doc.blobId, size, extname(made[size]).slice(1)), made[size]);
    }
    covers = { width: made.width, height: made.height };
    // Page 1 is every reader's first view: its variants are ready before anyone asks (the rest are made
    // on request). One page's encodes, a few tens of milliseconds; after the upload of its master.
    // Never fails the conversion: a variant not made here is made on its first request.
    await pageVariants(deps.blobs, { concurrency: 1 }).makeAll(doc.blobId, 1).catch(() => false);
  }
  const text = await recognizePages(pdf, await extractText(pdf, deps.pdfLimits, deps.textBounds, range), {
    ...deps.ocr,
    documentLanguage: doc.language,
    sizes: [...input.sizes],
    textLayerIsOurs: input.textLayerIsOurs,
    timeoutMs: deps.pdfLimits.timeoutMs,
    sandbox: deps.pdfLimits.sandbox,
    signal,
    tmpDir: work,
  });
  return { text, covers };
}

/** P -> A, with a name made from the title when the caller gave none (decisions §5). */
export async function publish(
  deps: ConvertDeps,
  doc: DocumentRecord,
  result: { pageCount: number; coverWidth: number; coverHeight: number; description: string | undefined },
  text: readonly PageText[],
): Promise<boolean> {
  const now = Date.now();
  // The search index reads every page's text in the transaction that publishes (decisions §11).
  const pageTexts = Array.from({ length: result.pageCount }, () => "");
  for (const p of text) pageTexts[p.page - 1] = p.text;
  let name: string | undefined;
  if (!doc.nameGiven) {
    const base = nameBaseFromTitle(doc.title);
    if (base !== undefined) {
      const candidates = nameCandidates(base);
      const taken = await deps.store.documents.takenNames(doc.accountId, candidates);
      name = candidates.find((c) => !taken.has(c));
    }
  }
  // Another document may take the name meanwhile: the store then publishes under the documentId.
  if (await deps.store.documents.markActive(doc.documentId, { ...result, name, pageTexts }, now)) return true;
  // Deleted (or finished) while we worked: what we wrote under its prefix must not outlive it.
  await removeIfDeleted(deps, doc);
  return false;
}

/** When the record is gone, removes every blob under its prefix; answers whether it was gone. */
export async function removeIfDeleted(deps: ConvertDeps, doc: DocumentRecord): Promise<boolean> {
  if (await deps.store.documents.getForConversion(doc.documentId)) return false;
  await deps.blobs.deletePrefix(blobKeys.prefix(doc.blobId));
  return true;
}

/**
 * Records a final failure: the document ends in F with the failure's code, any other job of it
 * (the other ranges of a split one) ends, and what the runs made (the PDF of an office document,
 * pages, covers) is removed: it serves nobody now. The original stays, as the record does.
 */
export async function failDocument(deps: ConvertDeps, documentId: string, error: unknown): Promise<void> {
  const known = error instanceof JobFailure;
  const message = known ? error.message : "An internal error stopped the conversion.";
  await deps.store.documents.markFailed(documentId, known ? error.code : 9, message, Date.now());
  const doc = await deps.store.documents.getForConversion(documentId);
  if (doc?.state !== "F") return;
  // The other ranges of a split document stop (their lease is gone): they would render for nothing.
  if (await deps.store.pageRanges.getFanout(documentId)) {
    await deps.store.jobs.failAllFor(documentId, "the document failed", Date.now());
    // The split's rows (its ranges with it) say nothing more of a document in F.
    await deps.store.pageRanges.forget(documentId);
  }
  await deps.blobs.deletePrefix(blobKeys.prefix(doc.blobId), [blobKeys.original(doc.blobId)]);
}
