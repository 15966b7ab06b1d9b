import { CONVERT_DOCUMENT, CONVERT_PAGES, type JobKind } from "../domain/job-kinds.ts";
import { convertDocumentHandler, type ConvertDocumentDeps } from "./convert-document.ts";
import { convertPagesHandler } from "./convert-pages.ts";
import type { JobHandler } from "./job-registry.ts";

/**
 * The conversion's job kinds and their handlers: a document's job, and the page-range jobs a long
 * document is split into. A worker registers both (any worker may take any range).
 */
export function conversionHandlers(deps: ConvertDocumentDeps): Map<JobKind, JobHandler> {
  return new Map([
    [CONVERT_DOCUMENT, convertDocumentHandler(deps)],
    [CONVERT_PAGES, convertPagesHandler(deps)],
  ]);
}
