import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { blobKeys } from "../blobs/blob-keys.ts";
import { ConversionError } from "../convert/conversion-error.ts";
import { detectFormat } from "../detect/detect-format.ts";
import { fetchToFile } from "../convert/fetch-url.ts";
import { imageToPdf } from "../convert/image-pages.ts";
import { textToPdf } from "../convert/text-to-pdf.ts";
import { conversionRoute, isImageType, isOrgDocType, type OrgDocType } from "../domain/formats.ts";
import { inspectPdf, summarize } from "../convert/pdf-pages.ts";
import type { DocumentRecord } from "../domain/document.ts";
import { planPageRanges } from "../domain/job-kinds.ts";
import { assertDiskRoom, diskFullOr, failDocument, publish, putFile, removeIfDeleted, runPageStep, type ConvertDeps } from "./conversion-steps.ts";
import type { JobHandler } from "./job-registry.ts";
import { publishSplit } from "./split-publish.ts";

export type { ConvertDeps } from "./conversion-steps.ts";

/** Plain text beyond this is no document a reader pages through (about 2,000 pages of prose). */
const MAX_TEXT_BYTES = 8 * 1024 * 1024;

export const FORMAT_MESSAGE = "The file is not a supported document (PDF, an office document, plain text or an image).";

/**
 * The whole P -> A/F pipeline, in order: original (fetched for URL uploads), PDF (LibreOffice for
 * office formats), inspection against the limits, page images, covers, text; then one guarded
 * update to A. Each step writes blobs under the document's private prefix, so a second run
 * overwrites rather than duplicates, and a deleted document is never brought back.
 *
 * A document of more pages than `deps.fanout.minPages` is split after its inspection: its page
 * ranges become jobs of their own (convert-pages.ts) that any worker may take, and this job ends.
 * The range done last enqueues this kind again, which then publishes what the ranges made.
 */
/** The document step's settings beyond the shared steps'. */
export interface ConvertDocumentDeps extends ConvertDeps {
  /** Pixels of all the frames of an image document together (QUIRE_MAX_IMAGE_MEGAPIXELS); unset, no bound of its own. */
  maxImagePixels?: number;
}

export function convertDocumentHandler(deps: ConvertDocumentDeps): JobHandler {
  return {
    async run({ job, signal }) {
      const doc = await deps.store.documents.getForConversion(job.documentId);
      if (!doc || doc.state !== "P") return "skipped";
      // Nothing is started while the data disk is short of space: the job waits for room.
      await assertDiskRoom(deps);
      const split = await deps.store.pageRanges.getFanout(doc.documentId);
      // Split already: publish once every range is done; until then the ranges' jobs are at work.
      if (split) return split.rangesLeft > 0 ? "success" : publishSplit(deps, doc, split, signal);
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
        const textLayerIsOurs = type !== "pdf" && conversionRoute(type) !== "image";
        if (deps.fanout && pageCount > deps.fanout.minPages) {
          const split = await deps.store.pageRanges.fanOut(
            {
              documentId: doc.documentId, accountId: doc.accountId, pageCount, textLayerIsOurs, requestId: job.requestId,
              pdfKey: type === "pdf" ? blobKeys.original(doc.blobId) : blobKeys.pdf(doc.blobId),
              ranges: planPageRanges(pageCount, deps.fanout.rangePages),
            },
            Date.now(),
          );
          // Not split: another run split it first, or the record went while we worked, and then the
          // PDF stored above (after the delete removed the prefix) must not outlive it.
          if (!split && (await removeIfDeleted(deps, doc))) return "skipped";
          return "success";
        }
        const { text, covers } = await runPageStep(deps, { doc, pdf, sizes, textLayerIsOurs, work, signal });
        await deps.blobs.put(blobKeys.text(doc.blobId), Readable.from([JSON.stringify(text)]));
        signal.throwIfAborted();
        return (await publish(deps, doc, {
          pageCount,
          coverWidth: covers?.width ?? 0,
          coverHeight: covers?.height ?? 0,
          description: doc.descriptionGiven ? undefined : summarize(text),
        }, text))
          ? "success"
          : "skipped";
      } catch (err) {
        // Deleted while we worked (the lost job lease aborts us): what we wrote must not outlive it.
        if (await removeIfDeleted(deps, doc)) return "skipped";
        throw await diskFullOr(deps, err, signal);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },

    async giveUp(job, error) {
      await failDocument(deps, job.documentId, error);
    },
  };
}

/** Every format but PDF becomes a PDF: office formats in LibreOffice, images by sharp, text laid out by Writer. */
export async function toPdf(deps: ConvertDocumentDeps, type: Exclude<OrgDocType, "pdf">, original: string, pdf: string, signal: AbortSignal): Promise<void> {
  if (isImageType(type)) await imageToPdf(original, type, pdf, { maxPixels: deps.pdfLimits.maxPagePixels, maxPages: deps.pdfLimits.maxPages, maxTotalPixels: deps.maxImagePixels, signal });
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
