import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Logger } from "pino";
import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import { ConversionError } from "../convert/conversion-error.ts";
import { JobFailure } from "../domain/job-failure.ts";
import { detectFormat } from "../detect/detect-format.ts";
import { fetchToFile, type FetchOptions } from "../convert/fetch-url.ts";
import { imageToPdf } from "../convert/image-pages.ts";
import { recognizePages, type OcrSettings } from "../convert/page-ocr.ts";
import type { OfficeConverter } from "../convert/office-to-pdf.ts";
import { textToPdf } from "../convert/text-to-pdf.ts";
import { conversionRoute, isImageType, isOrgDocType, type OrgDocType } from "../domain/formats.ts";
import { extractText, inspectPdf, renderCovers, renderPages, summarize, type PdfLimits, type RenderedPage } from "../convert/pdf-pages.ts";
import type { TextBounds } from "../convert/pdf-text.ts";
import type { DocumentRecord } from "../domain/document.ts";
import { nameBaseFromTitle, nameCandidates } from "../domain/document-name.ts";
import { isUniqueViolation } from "../store/documents.ts";
import type { Store } from "../store/open-store.ts";
import type { JobHandler } from "./job-registry.ts";

export { CONVERT_DOCUMENT } from "../domain/job-kinds.ts";

export interface ConvertDeps {
  store: Store;
  blobs: BlobStore;
  office: Pick<OfficeConverter, "convert">;
  log: Logger;
  /** Scratch space for one conversion; removed when it ends, whatever happens. */
  tmpDir: string;
  fetch: Omit<FetchOptions, "signal">;
  pdfLimits: PdfLimits;
  /** Text kept per page and per document (QUIRE_TEXT_MAX_*); the defaults when unset. */
  textBounds?: TextBounds;
  pageWidths: { thumb: number; read: number };
  /** Pages without a usable text layer are read by Tesseract with these settings. */
  ocr: OcrSettings;
}

/** Plain text beyond this is no document a reader pages through (about 2,000 pages of prose). */
const MAX_TEXT_BYTES = 8 * 1024 * 1024;

const FORMAT_MESSAGE = "The file is not a supported document (PDF, an office document, plain text or an image).";

/**
 * The whole P -> A/F pipeline, in order: original (fetched for URL uploads), PDF (LibreOffice for
 * office formats), inspection against the limits, page images, covers, text; then one guarded
 * update to A. Each step writes blobs under the document's private prefix, so a second run
 * overwrites rather than duplicates, and a deleted document is never brought back.
 */
export function convertDocumentHandler(deps: ConvertDeps): JobHandler {
  return {
    async run({ job, signal }) {
      const doc = await deps.store.documents.getForConversion(job.documentId);
      if (!doc || doc.state !== "P") return "skipped";
      const work = await mkdtemp(join(deps.tmpDir, "convert-"));
      try {
        const original = join(work, "original");
        const type = await obtainOriginal(deps, doc, original, signal);
        let pdf = original;
        if (type !== "pdf") {
          pdf = join(work, "document.pdf");
          await toPdf(deps, type, original, pdf, signal);
          await putFile(deps.blobs, blobKeys.pdf(doc.blobId), pdf);
        }
        signal.throwIfAborted();
        const { pageCount, pages: sizes } = await inspectPdf(pdf, deps.pdfLimits);
        // Each image goes to the blob store as soon as it exists, while later pages still render.
        const uploads: Promise<void>[] = [];
        const uploaded: string[] = [];
        const onPage = (p: RenderedPage) => {
          const key = blobKeys.page(doc.blobId, p.page, p.size, extname(p.path).slice(1));
          const upload = putFile(deps.blobs, key, p.path).then(() => void uploaded.push(key));
          upload.catch(() => undefined); // reported by the Promise.all below, not as an unhandled rejection
          uploads.push(upload);
        };
        const rendered = await renderPages(pdf, join(work, "pages"), { widths: deps.pageWidths, limits: deps.pdfLimits, signal, onPage }).catch(async (err: unknown) => {
          // A document that cannot be rendered whole keeps none of its pages.
          await Promise.allSettled(uploads);
          await Promise.allSettled(uploaded.map((key) => deps.blobs.delete(key)));
          throw err;
        });
        await Promise.all(uploads);
        const covers = await renderCovers(pdf, join(work, "covers"), deps.pdfLimits, rendered.find((p) => p.page === 1 && p.size === "read"));
        for (const size of ["small", "medium", "large"] as const) {
          await putFile(deps.blobs, blobKeys.cover(doc.blobId, size, extname(covers[size]).slice(1)), covers[size]);
        }
        const text = await recognizePages(pdf, await extractText(pdf, deps.pdfLimits, deps.textBounds), {
          ...deps.ocr,
          documentLanguage: doc.language,
          sizes,
          textLayerIsOurs: type !== "pdf" && conversionRoute(type) !== "image",
          timeoutMs: deps.pdfLimits.timeoutMs,
          signal,
          tmpDir: work,
        });
        await deps.blobs.put(blobKeys.text(doc.blobId), Readable.from([JSON.stringify(text)]));
        signal.throwIfAborted();
        return (await publish(deps, doc, {
          pageCount,
          coverWidth: covers.width,
          coverHeight: covers.height,
          description: doc.descriptionGiven ? undefined : summarize(text),
        }))
          ? "success"
          : "skipped";
      } catch (err) {
        // Deleted while we worked (the lost job lease aborts us): what we wrote must not outlive it.
        if (await removeIfDeleted(deps, doc)) return "skipped";
        throw err;
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },

    async giveUp(job, error) {
      const known = error instanceof JobFailure;
      const message = known ? error.message : "An internal error stopped the conversion.";
      await deps.store.documents.markFailed(job.documentId, known ? error.code : 9, message, Date.now());
      // What a failed run made (the PDF of an office document, pages, covers) serves nobody now;
      // the original stays, as the record does.
      const doc = await deps.store.documents.getForConversion(job.documentId);
      if (doc?.state === "F") await removeBlobs(deps, doc.blobId, blobKeys.original(doc.blobId));
    },
  };
}

/** Every format but PDF becomes a PDF: office formats in LibreOffice, images by sharp, text laid out by Writer. */
async function toPdf(deps: ConvertDeps, type: Exclude<OrgDocType, "pdf">, original: string, pdf: string, signal: AbortSignal): Promise<void> {
  if (isImageType(type)) await imageToPdf(original, type, pdf, { maxPixels: deps.pdfLimits.maxPagePixels, maxPages: deps.pdfLimits.maxPages, signal });
  else if (type === "txt") await textToPdf(original, pdf, deps.office, { maxBytes: MAX_TEXT_BYTES, signal });
  else await deps.office.convert(original, pdf, signal);
}

/** The original as a local file: fetched (URL uploads, first run) or read back from the blob store. */
async function obtainOriginal(deps: ConvertDeps, doc: DocumentRecord, path: string, signal: AbortSignal): Promise<OrgDocType> {
  const key = blobKeys.original(doc.blobId);
  if (doc.origin === "apislurp" && !(await deps.blobs.exists(key))) {
    await fetchToFile(doc.slurpUrl, path, { ...deps.fetch, signal });
    const type = await detectFormat(path);
    if (type === null) throw new ConversionError("format", FORMAT_MESSAGE);
    await putFile(deps.blobs, key, path); // copied, not moved: the conversion still reads it
    await deps.store.documents.recordFetchedOriginal(doc.documentId, type, (await stat(path)).size, Date.now());
    return type;
  }
  await pipeline(await deps.blobs.get(key), createWriteStream(path));
  if (!isOrgDocType(doc.orgDocType)) {
    // fetched by an earlier run that stopped before recording the type
    const type = await detectFormat(path);
    if (type === null) throw new ConversionError("format", FORMAT_MESSAGE);
    return type;
  }
  return doc.orgDocType;
}

async function putFile(blobs: BlobStore, key: string, path: string): Promise<void> {
  await blobs.put(key, createReadStream(path));
}

/** P -> A, with a name made from the title when the caller gave none (decisions §5). */
async function publish(
  deps: ConvertDeps,
  doc: DocumentRecord,
  result: { pageCount: number; coverWidth: number; coverHeight: number; description: string | undefined },
): Promise<boolean> {
  const now = Date.now();
  let name: string | undefined;
  if (!doc.nameGiven) {
    const base = nameBaseFromTitle(doc.title);
    if (base !== undefined) {
      const candidates = nameCandidates(base);
      const taken = await deps.store.documents.takenNames(doc.accountId, candidates);
      name = candidates.find((c) => !taken.has(c));
    }
  }
  try {
    if (await deps.store.documents.markActive(doc.documentId, { ...result, name }, now)) return true;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // another document took the name meanwhile: publish under the documentId, which is always free
    if (await deps.store.documents.markActive(doc.documentId, { ...result, name: undefined }, now)) return true;
  }
  // Deleted (or finished) while we worked: what we wrote under its prefix must not outlive it.
  await removeIfDeleted(deps, doc);
  return false;
}

/** When the record is gone, removes every blob under its prefix; answers whether it was gone. */
async function removeIfDeleted(deps: ConvertDeps, doc: DocumentRecord): Promise<boolean> {
  if (await deps.store.documents.getForConversion(doc.documentId)) return false;
  await removeBlobs(deps, doc.blobId);
  return true;
}

/** Removes every blob of a document but `keep`. */
async function removeBlobs(deps: ConvertDeps, blobId: string, keep?: string): Promise<void> {
  for (const key of await deps.blobs.list(blobKeys.prefix(blobId))) {
    if (key !== keep) await deps.blobs.delete(key);
  }
}
