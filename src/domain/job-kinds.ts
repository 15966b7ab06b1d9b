/**
 * Every kind of durable job, in one list: the jobs table's `kind` column is typed by it, the API
 * and the sweeper enqueue only these, and a worker refuses to start unless it has a handler for
 * each. A new kind (webhook delivery, OCR) is added here and gets its handler in the registry.
 */
export const JOB_KINDS = ["convert-document"] as const;

export type JobKind = (typeof JOB_KINDS)[number];

/** Converts an uploaded document (P) into its published form (A), or fails it (F). */
export const CONVERT_DOCUMENT: JobKind = "convert-document";

export function isJobKind(kind: string): kind is JobKind {
  return (JOB_KINDS as readonly string[]).includes(kind);
}
