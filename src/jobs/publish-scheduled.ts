import { PUBLISH_SCHEDULED } from "../domain/job-kinds.ts";
import { publishDocument } from "../domain/v2-documents.ts";
import type { Store } from "../store/open-store.ts";
import type { JobHandler } from "./job-registry.ts";

export { PUBLISH_SCHEDULED };

/**
 * The `publish-scheduled` job (decisions §14): at a v2 draft's `scheduledTime` it is published as
 * `POST /v2/drafts/{slug}/publish` would (the same domain operation), with the `desiredName` given
 * when it was scheduled. Skipped when the document is gone, published meanwhile, or rescheduled
 * to a later time (that time's own job publishes it). A draft not converted yet is retried later.
 */
export function publishScheduledHandler(deps: { store: Pick<Store, "documents" | "documentV2"> }): JobHandler {
  return {
    async run({ job }) {
      const doc = await deps.store.documents.getForConversion(job.documentId);
      if (!doc || doc.draft !== true) return "skipped";
      const row = (await deps.store.documentV2.get([doc.documentId])).get(doc.documentId);
      const now = Date.now();
      if (row?.scheduledAt == null || row.scheduledAt > now) return "skipped";
      const desired = typeof row.info.desiredName === "string" ? row.info.desiredName : undefined;
      const outcome = await publishDocument(deps.store.documents, doc, desired, undefined, now);
      if (!outcome.ok) {
        if (outcome.reason === "not-found") return "skipped";
        throw new Error(`scheduled publish of ${doc.documentId} refused: ${outcome.reason}`);
      }
      await deps.store.documentV2.clearSchedule(doc.documentId);
      return "success";
    },

    async giveUp() {
      // The draft stays a draft, SCHEDULED in v2's answers until its owner publishes it.
    },
  };
}
