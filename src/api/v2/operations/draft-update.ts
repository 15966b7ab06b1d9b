import { updateDocument } from "../../../domain/document-operations.ts";
import { extrasOf, recordChangesOf } from "../../../domain/v2-documents.ts";
import { draftBody, slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { draftAnswer, fileUrlSource, ownDocument, readInfo, replaceOriginal, v2RowOf } from "../v2-documents.ts";

/**
 * `PATCH /v2/drafts/{slug}`: a draft's information is written at once (the one update rule v1 and
 * the app use); a published document's is staged under `changes` until it is published again
 * (decisions §14). A `fileUrl` gives a draft a new file.
 */
export const draftUpdate: V2Operation = {
  method: "PATCH",
  url: "/drafts/:slug",
  schema: { params: slugParams, body: draftBody },
  async handler(ctx) {
    const doc = await ownDocument(ctx, ctx.params.slug!);
    const info = readInfo(ctx.body.info);
    const store = ctx.deps.store;
    const row = await v2RowOf(ctx, doc.documentId);
    if (ctx.body.fileUrl !== undefined) await replaceOriginal(ctx, doc, fileUrlSource(ctx.body.fileUrl as string), undefined);
    const before = row?.info ?? {};
    const copyright = ctx.body.confirmCopyright === true ? { isCopyrightConfirmed: true } : {};
    const scheduled = info.scheduledTime !== undefined ? { scheduledTime: info.scheduledTime } : {};
    if (doc.draft === true) {
      const changes = recordChangesOf(info, ctx.now);
      if (Object.keys(changes).length > 0) await updateDocument(store.documents, doc.accountId, doc.documentId, changes, ctx.now);
      await store.documentV2.setInfo(doc.documentId, { ...extrasOf(info, before), ...copyright, ...scheduled });
    } else if (ctx.body.info !== undefined) {
      // Staged as v2 sent it (after its checks), applied by the next publish.
      const staged = { ...(row?.changes ?? {}) } as Record<string, unknown>;
      for (const [k, v] of Object.entries(ctx.body.info as Record<string, unknown>)) if (v !== undefined && k !== "file" && k !== "fileId") staged[k] = v;
      await store.documentV2.setChanges(doc.documentId, staged);
      if (Object.keys(copyright).length > 0) await store.documentV2.setInfo(doc.documentId, { ...before, ...copyright });
    }
    return json(await draftAnswer(ctx, doc.documentId));
  },
};
