import { ALL_VARIANT_WIDTHS } from "../domain/page-images.ts";
import type { Store } from "../store/open-store.ts";
import type { PageVariants } from "../page-variants.ts";
import type { JobHandler } from "./job-registry.ts";

export interface PageVariantsJobDeps {
  store: Pick<Store, "documents">;
  variants: Pick<PageVariants, "makeAll">;
  /** The `page-variants-remake` job (`--force`): every WebP variant is made again, stored ones too. */
  remake?: boolean;
}

/**
 * The `page-variants` job (`quire pages reencode`): every page of a published document gets its
 * WebP variants made and stored now, so that no reader waits for one to be made on request. Pages
 * done already are skipped cheaply, so a job run again (a lost lease, the command run twice) only
 * finishes the work. The masters are never touched: the document reads the same throughout.
 * Skipped when the document is no longer published; never fails the document: whatever is not made
 * here is made on its first request.
 *
 * With `remake` (`--force`) every page's WebP variants are made again from its master, one page at
 * a time as without it, each put over the stored one: readers are served the old variant until the
 * new one is whole in its place (every blob write is atomic: a rename, or one S3 object). Nothing
 * tells an old variant from one made since, so a run again (a lost lease) makes them all again:
 * at most the same work twice, never a variant lost.
 */
export function pageVariantsHandler(deps: PageVariantsJobDeps): JobHandler {
  const replace = deps.remake ? ALL_VARIANT_WIDTHS : undefined;
  return {
    async run({ job, signal }) {
      const doc = await deps.store.documents.getForConversion(job.documentId);
      if (doc?.state !== "A") return "skipped";
      for (let page = 1; page <= doc.pageCount; page++) {
        signal.throwIfAborted();
        // A page without a master: the document was deleted or replaced meanwhile; its next job sees that.
        if (!(await deps.variants.makeAll(doc.blobId, page, replace))) return "skipped";
      }
      return "success";
    },

    async giveUp() {
      // The document stays as it is: its variants are made on request.
    },
  };
}
