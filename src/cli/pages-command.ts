import { PAGE_VARIANTS, PAGE_VARIANTS_REMAKE } from "../domain/job-kinds.ts";
import type { Store } from "../store/open-store.ts";

export const PAGES_USAGE = `usage: quire pages reencode [--document <documentId>] [--force]
  Queues a background job per published document (or for one document) that makes every page's
  reading variants (WebP at each width) from its stored page images, so no reader waits for one.
  Pages that have their variants already are skipped, unless --force: then every stored WebP
  variant is made again by today's encoder and replaces the old one (variants made before the
  flat encoding of text pages are much heavier). Readers are served throughout, the old variant
  until its new one is stored whole. The documents' page images and addresses stay as they are; a
  document with a job already queued is not queued again. A running worker does the work.`;

/** `quire pages …`: argument parsing only; the work is the worker's `page-variants` jobs. */
export async function pagesCommand(store: Pick<Store, "jobs">, args: string[], out: (s: string) => void = (s) => process.stdout.write(s), err: (s: string) => void = (s) => process.stderr.write(s)): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "reencode") {
    err(`${PAGES_USAGE}\n`);
    return sub === undefined || sub === "--help" ? 0 : 2;
  }
  let documentId: string | undefined;
  let force = false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === "--document" && rest[i + 1] !== undefined && !rest[i + 1]?.startsWith("-")) documentId = rest[++i];
    else if (a === "--force") force = true;
    else {
      err(`quire pages reencode: unexpected argument ${JSON.stringify(a)}\n${PAGES_USAGE}\n`);
      return 2;
    }
  }
  // A job carries only its kind: --force is a kind of its own (src/domain/job-kinds.ts).
  const queued = await store.jobs.enqueueForPublished(force ? PAGE_VARIANTS_REMAKE : PAGE_VARIANTS, Date.now(), documentId);
  if (documentId !== undefined && queued === 0) {
    err(`quire pages reencode: no published document ${JSON.stringify(documentId)} without a job queued for it\n`);
    return 1;
  }
  out(`${queued} document${queued === 1 ? "" : "s"} queued for page re-encoding${force ? " (--force: stored variants made again)" : ""}\n`);
  return 0;
}
