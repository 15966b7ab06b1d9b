import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { blobKeys } from "../blobs/blob-keys.ts";
import { ConversionError } from "../convert/conversion-error.ts";
import { fetchToFile } from "../convert/fetch-url.ts";
import { inspectPdf, summarize } from "../convert/pdf-pages.ts";
import { detectFormat } from "../detect/detect-format.ts";
import type { DocumentRecord } from "../domain/document.ts";
import type { Replacement } from "../domain/document-replacement.ts";
import { conversionRoute, isOrgDocType, type OrgDocType } from "../domain/formats.ts";
import { JobFailure } from "../domain/job-failure.ts";
import { FORMAT_MESSAGE, toPdf, type ConvertDocumentDeps } from "./convert-document.ts";
import { assertDiskRoom, diskFullOr, putFile, runPageStep } from "./conversion-steps.ts";
import type { JobHandler } from "./job-registry.ts";

/**
 * A published document's new file (src/domain/document-replacement.ts): converted by the steps of
 * any document, into the replacement's own blob folder, while readers keep the pages they see; then
 * one guarded switch (src/store/document-replacements.ts). The job owns its replacement by its id: a
 * newer replacement, or the document's delete, takes the row away, and what this run made is then
 * removed instead of switched to. The replaced pages go once the switch is committed (the orphan
 * clean-up takes them should that be cut short). A replacement is never split into page ranges.
 */
export function replaceFileHandler(deps: ConvertDocumentDeps): JobHandler {
  return {
    async run({ job, signal }) {
      const replacement = await deps.store.replacements.get(job.documentId);
      const doc = await deps.store.documents.getForConversion(job.documentId);
      if (!replacement || replacement.jobId !== job.id || replacement.state !== "P" || !doc || doc.state !== "A") {
        if (replacement?.jobId === job.id && replacement.state === "P") await discard(deps, replacement.blobId);
        return "skipped";
      }
      await assertDiskRoom(deps);
      // The page step writes under the record's blobId: here, the replacement's.
      const target: DocumentRecord = { ...doc, blobId: replacement.blobId };
      const work = await mkdtemp(join(deps.tmpDir, "convert-"));
      try {
        const original = join(work, "original");
        const { type, size } = await obtainOriginal(deps, replacement, job.id, original, signal);
        let pdf = original;
        if (type !== "pdf") {
          pdf = join(work, "document.pdf");
          await toPdf(deps, type, original, pdf, signal);
          await putFile(deps.blobs, blobKeys.pdf(replacement.blobId), pdf);
        }
        signal.throwIfAborted();
        const { pageCount, pages: sizes } = await inspectPdf(pdf, deps.pdfLimits);
        const textLayerIsOurs = type !== "pdf" && conversionRoute(type) !== "image";
        const { text, covers } = await runPageStep(deps, { doc: target, pdf, sizes, textLayerIsOurs, work, signal });
        await deps.blobs.put(blobKeys.text(replacement.blobId), Readable.from([JSON.stringify(text)]));
        signal.throwIfAborted();
        const pageTexts = Array.from({ length: pageCount }, () => "");
        for (const p of text) pageTexts[p.page - 1] = p.text;
        const switched = await deps.store.replacements.switchTo(doc.documentId, job.id, {
          orgDocType: type, originalSize: size, pageCount,
          coverWidth: covers?.width ?? 0, coverHeight: covers?.height ?? 0,
          description: doc.descriptionGiven ? undefined : summarize(text),
          pageTexts,
        }, Date.now());
        if (!switched.ok) {
          await discard(deps, replacement.blobId);
          return "skipped";
        }
        await deps.blobs.deletePrefix(blobKeys.prefix(switched.previousBlobId)).catch((err: unknown) => {
          deps.log.warn({ err, documentId: doc.documentId }, "could not remove a replaced file's pages; the orphan clean-up will");
        });
        return "success";
      } catch (err) {
        // Superseded or deleted while we worked: what we wrote must not outlive it.
        if (!(await stillOwned(deps, job.documentId, job.id))) {
          await discard(deps, replacement.blobId);
          return "skipped";
        }
        throw await diskFullOr(deps, err, signal);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },

    async giveUp(job, error) {
      const known = error instanceof JobFailure;
      const failed = await deps.store.replacements.markFailed(
        job.documentId, job.id, known ? error.code : 9, known ? error.message : "An internal error stopped the conversion.", Date.now(),
      );
      // The document keeps its pages; the new file's, and the file itself, serve nobody now.
      if (failed) await discard(deps, failed.blobId);
    },
  };
}

async function stillOwned(deps: ConvertDocumentDeps, documentId: string, jobId: number): Promise<boolean> {
  const r = await deps.store.replacements.get(documentId);
  return r?.jobId === jobId && r.state === "P";
}

async function discard(deps: ConvertDocumentDeps, blobId: string): Promise<void> {
  await deps.blobs.deletePrefix(blobKeys.prefix(blobId));
}

/** The new file as a local file: fetched (an address, first run) or read back from the blob store. */
async function obtainOriginal(deps: ConvertDocumentDeps, r: Replacement, jobId: number, path: string, signal: AbortSignal): Promise<{ type: OrgDocType; size: number }> {
  const key = blobKeys.original(r.blobId);
  if (r.origin === "apislurp" && !(await deps.blobs.exists(key))) {
    await fetchToFile(r.slurpUrl, path, { ...deps.fetch, signal });
    const type = await detectFormat(path);
    if (type === null) throw new ConversionError("format", FORMAT_MESSAGE);
    const size = (await stat(path)).size;
    await putFile(deps.blobs, key, path);
    await deps.store.replacements.recordFetched(r.documentId, jobId, type, size, Date.now());
    return { type, size };
  }
  await pipeline(await deps.blobs.get(key), createWriteStream(path));
  const size = (await stat(path)).size;
  if (isOrgDocType(r.orgDocType)) return { type: r.orgDocType, size };
  const type = await detectFormat(path);
  if (type === null) throw new ConversionError("format", FORMAT_MESSAGE);
  return { type, size };
}
