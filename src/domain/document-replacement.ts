import type { DocumentOrigin, DocumentRecord } from "./document.ts";
import type { RecordedDocType } from "./formats.ts";

/**
 * Replacing a document's file, keeping its address (issue 26 item 5; decisions §14). One rule for
 * v1 (`svc.document.update` with a `file` on the upload endpoint), v2 (`PATCH /v2/drafts/{slug}/upload`,
 * `fileUrl`) and the app's edit page:
 *
 * - a published document (A) stays published with its pages while the new file converts under a
 *   blob folder of its own; one guarded update then switches it to the new pages. A failure leaves
 *   the old pages and is recorded on the replacement (state F, a code and a sentence). A second
 *   replacement while one converts wins: the older one's result is discarded.
 * - a document no reader sees pages of (failed, or a v2 draft) takes the file at once and converts
 *   again, as an upload does;
 * - a document converting for the first time (P) is refused: there is nothing to keep, and its
 *   conversion is about to say whether it worked.
 */

/** A replacement's row: converting (P) or failed (F); none once the document switched to it. */
export interface Replacement {
  documentId: string;
  accountId: number;
  blobId: string;
  jobId: number;
  origin: DocumentOrigin;
  orgDocType: RecordedDocType;
  orgDocName: string;
  slurpUrl: string;
  originalSize: number;
  state: "P" | "F";
  errorCode: number;
  errorMessage: string;
  createdAt: number;
  updatedAt: number;
}

export type ReplaceRoute = "beside" | "restart" | "converting";

/** How a new file reaches this document (see above). */
export function replaceRoute(doc: Pick<DocumentRecord, "state">): ReplaceRoute {
  if (doc.state === "A") return "beside";
  if (doc.state === "P") return "converting";
  return "restart";
}

/** The sentence people read about a replacement (the app; v1 and v2 carry the code and message). */
export function replacementStatus(r: Pick<Replacement, "state" | "errorMessage"> | undefined): string | undefined {
  if (r === undefined) return undefined;
  return r.state === "P" ? "A new file is converting; readers see the current pages until it is ready." : `Replacement failed: ${r.errorMessage}`;
}
