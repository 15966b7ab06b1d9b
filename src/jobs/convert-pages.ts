import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { blobKeys } from "../blobs/blob-keys.ts";
import { inspectPdf } from "../convert/pdf-pages.ts";
import { assertDiskRoom, diskFullOr, failDocument, removeIfDeleted, runPageStep, type ConvertDeps } from "./conversion-steps.ts";
import type { DocumentRecord } from "../domain/document.ts";
import type { JobHandler } from "./job-registry.ts";

/** The "being processed" page's figure is written at most this often per range. */
const PROGRESS_EVERY_MS = 1000;

/**
 * One page range of a split document (issue 16): its images and covers go where the whole
 * document's would, its text under a key of the range's own; then the range is marked done in one
 * transaction with the lease still held, which enqueues the publishing step when it was the last.
 * A worker that dies here loses only this range: its job is taken over when the lease runs out, and
 * the range is rendered again over the same keys. A range that fails for good fails the document.
 */
export function convertPagesHandler(deps: ConvertDeps): JobHandler {
  return {
    async run({ job, signal }) {
      const range = await deps.store.pageRanges.forJob(job.id);
      if (!range || range.done) return "skipped";
      const doc = await deps.store.documents.getForConversion(range.documentId);
      if (!doc || doc.state !== "P") return "skipped";
      await assertDiskRoom(deps);
      const work = await mkdtemp(join(deps.tmpDir, "convert-"));
      let lastWrite = 0;
      let progress: Promise<void> = Promise.resolve();
      const onPagesStored = (n: number) => {
        if (Date.now() - lastWrite < PROGRESS_EVERY_MS) return;
        lastWrite = Date.now();
        // One write at a time; a lost figure is only a slower one, never a failed range.
        progress = progress.then(() => deps.store.pageRanges.recordPagesReady(job.id, n)).catch(() => undefined);
      };
      try {
        const pdf = join(work, "document.pdf");
        await pipeline(await deps.blobs.get(range.pdfKey), createWriteStream(pdf));
        signal.throwIfAborted();
        const { pages: sizes } = await inspectPdf(pdf, deps.pdfLimits, signal);
        const { text, covers } = await runPageStep(deps, {
          doc, pdf, sizes, range: { first: range.firstPage, last: range.lastPage }, textLayerIsOurs: range.textLayerIsOurs, work, signal, onPagesStored,
        });
        await deps.blobs.put(blobKeys.rangeText(doc.blobId, range.firstPage), Readable.from([JSON.stringify(text)]));
        await progress;
        signal.throwIfAborted();
        if (await deps.store.pageRanges.completeRange(job.id, job.leaseOwner ?? "", covers, Date.now())) return "success";
        // Not counted: the lease went because the document ended meanwhile (or another run took it over).
        await removeIfEnded(deps, doc);
        return "skipped";
      } catch (err) {
        if (await removeIfEnded(deps, doc)) return "skipped";
        throw await diskFullOr(deps, err, signal);
      } finally {
        await progress;
        await rm(work, { recursive: true, force: true });
      }
    },

    async giveUp(job, error) {
      await failDocument(deps, job.documentId, error);
    },
  };
}

/**
 * A document deleted, or failed by another range, while this range worked: what this range stored
 * after that clean-up must not outlive it (only a failed document's original stays). Answers
 * whether the document was deleted.
 */
async function removeIfEnded(deps: ConvertDeps, doc: DocumentRecord): Promise<boolean> {
  if (await removeIfDeleted(deps, doc)) return true;
  const now = await deps.store.documents.getForConversion(doc.documentId);
  if (now?.state === "F") await deps.blobs.deletePrefix(blobKeys.prefix(doc.blobId), [blobKeys.original(doc.blobId)]);
  return false;
}
