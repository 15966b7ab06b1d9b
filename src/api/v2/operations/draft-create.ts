import { buildNewDocument, newBlobId, newDocumentIds } from "../../../domain/document.ts";
import { extrasOf, recordChangesOf } from "../../../domain/v2-documents.ts";
import { createDocument, readUploadOptions } from "../../../uploads/new-document.ts";
import { draftBody } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { draftAnswer, fileUrlSource, readInfo } from "../v2-documents.ts";

/**
 * `POST /v2/drafts`: a draft with or without a file. With `fileUrl`, the worker fetches it as it
 * fetches v1's `slurpUrl` and converts it; the draft stays unpublished (decisions §14). Answers 200.
 */
export const draftCreate: V2Operation = {
  method: "POST",
  url: "/drafts",
  schema: { body: draftBody },
  async handler(ctx) {
    const info = readInfo(ctx.body.info);
    const { accountId, username } = ctx.caller;
    const store = ctx.deps.store;
    const defaults = await readUploadOptions(() => undefined, store, accountId);
    const c = recordChangesOf(info, ctx.now);
    const options = {
      ...defaults,
      ...(c.title !== undefined ? { title: c.title } : {}),
      ...(c.description !== undefined ? { description: c.description } : {}),
      ...(c.access !== undefined ? { access: c.access } : {}),
      ...(c.downloadable !== undefined ? { downloadable: c.downloadable } : {}),
      ...(c.publishDate !== undefined ? { publishDate: c.publishDate } : {}),
    };
    const fileUrl = ctx.body.fileUrl as string | undefined;
    let documentId: string;
    if (fileUrl !== undefined) {
      const doc = await createDocument(ctx.deps, {
        uploader: { accountId, username }, source: fileUrlSource(fileUrl), options, spooledPath: undefined, now: ctx.now, requestId: ctx.requestId, draft: true,
      });
      documentId = doc.documentId;
    } else {
      const doc = buildNewDocument(
        newDocumentIds(ctx.now),
        { accountId, username, origin: "apiupload", orgDocType: "unknown", orgDocName: "", defaultTitle: "", slurpUrl: "", originalSize: 0, blobId: newBlobId() },
        options,
        ctx.now,
      );
      await store.documents.insertDraft(doc);
      documentId = doc.documentId;
    }
    await store.documentV2.setInfo(documentId, {
      ...extrasOf(info, {}),
      isCopyrightConfirmed: ctx.body.confirmCopyright === true,
      ...(info.scheduledTime != null ? { scheduledTime: info.scheduledTime } : {}),
    });
    return json(await draftAnswer(ctx, documentId));
  },
};
