import { firstName, publishDocument, publishRefusal, recordChangesOf } from "../../../domain/v2-documents.ts";
import { slugParams } from "../v2-schemas.ts";
import { json, notFound, V2Error, type V2Operation } from "../v2-operation.ts";
import { ownDocument, readInfo, v2RowOf } from "../v2-documents.ts";
import { appLocation, publicPath } from "../v2-views.ts";

const REASONS = {
  file_not_converted: "The document's file is not converted yet",
  missing_file: "The draft has no file",
  missing_title: "The draft has no title",
} as const;

/**
 * `POST /v2/drafts/{slug}/publish`: a converted draft is published (`desiredName` names it on
 * its first publish, with a suffix when taken), or scheduled when its `scheduledTime` is ahead;
 * a published document gets its staged `changes`. Refusals are 400 with `publishFailedReason`.
 */
export const draftPublish: V2Operation = {
  method: "POST",
  url: "/drafts/:slug/publish",
  schema: {
    params: slugParams,
    body: { type: "object", additionalProperties: false, properties: { desiredName: { type: "string", maxLength: 200 } } },
  },
  async handler(ctx) {
    const store = ctx.deps.store;
    const doc = await ownDocument(ctx, ctx.params.slug!);
    const row = await v2RowOf(ctx, doc.documentId);
    const desiredName = ctx.body.desiredName as string | undefined;
    const refuse = (reason: keyof typeof REASONS) => new V2Error(400, REASONS[reason], { publishFailedReason: reason });

    const scheduledTime = typeof row?.info.scheduledTime === "number" ? row.info.scheduledTime : undefined;
    if (doc.draft === true && scheduledTime !== undefined && scheduledTime > ctx.now) {
      const refusal = publishRefusal(doc);
      if (refusal !== undefined) throw refuse(refusal);
      await store.documentV2.setInfo(doc.documentId, { ...row!.info, ...(desiredName !== undefined ? { desiredName } : {}) });
      await store.documentV2.schedule(doc.documentId, doc.accountId, scheduledTime, ctx.now);
      // The address it will have (clients keep publicLocation): the name its publish gives it, as of now.
      const { name } = await firstName(store.documents, doc, desiredName);
      return json({ publicLocation: `${ctx.origin}${publicPath({ username: doc.username, name })}`, location: appLocation(ctx.origin, doc) });
    }
    const staged = row?.changes ? recordChangesOf(readInfo(row.changes), ctx.now) : undefined;
    const outcome = await publishDocument(store.documents, doc, desiredName, staged, ctx.now);
    if (!outcome.ok) {
      if (outcome.reason === "not-found") throw notFound();
      throw refuse(outcome.reason);
    }
    if (row?.changes) {
      const extras = readInfo(row.changes);
      await store.documentV2.setInfo(doc.documentId, {
        ...row.info,
        ...(extras.preview !== undefined ? { preview: extras.preview } : {}),
        ...(extras.type !== undefined ? { type: extras.type } : {}),
        ...(extras.showDetectedLinks !== undefined ? { showDetectedLinks: extras.showDetectedLinks } : {}),
      });
      await store.documentV2.setChanges(doc.documentId, null);
    }
    if (row?.scheduledAt != null) await store.documentV2.clearSchedule(doc.documentId);
    return json({ publicLocation: `${ctx.origin}${publicPath(outcome.doc)}`, location: appLocation(ctx.origin, outcome.doc) });
  },
};
