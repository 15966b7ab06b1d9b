import { rm } from "node:fs/promises";
import { QuireError } from "../../../domain/errors.ts";
import { readUpload, type SpooledFile } from "../../../uploads/upload-reader.ts";
import { slugParams } from "../v2-schemas.ts";
import { json, V2Error, type V2Operation } from "../v2-operation.ts";
import { draftAnswer, ownDocument, replaceOriginal, spooledSource } from "../v2-documents.ts";

/**
 * `PATCH /v2/drafts/{slug}/upload`: multipart with a `file` part (any file name: the SDK's is
 * `blob`) and `confirmCopyright` (`"true"`, `"false"` or absent are all accepted), read by v1's
 * streamed upload reader under its size limit; the format comes from the content.
 */
export const draftUpload: V2Operation = {
  method: "PATCH",
  url: "/drafts/:slug/upload",
  schema: { params: slugParams },
  rawBody: true,
  async handler(ctx) {
    const doc = await ownDocument(ctx, ctx.params.slug!);
    const fields = new Map<string, string>();
    let file: SpooledFile | undefined;
    try {
      file = await readUpload(ctx.raw, { add: (name, value) => void (fields.has(name) ? undefined : fields.set(name, value)) }, {
        maxBytes: ctx.deps.config.maxUploadBytes,
        tempPath: () => ctx.deps.tempPath(),
        beforeFile: async () => {},
        onLimit: async () => new QuireError("205", "file"),
      });
    } catch (err) {
      if (err instanceof QuireError && err.code !== "205") throw new V2Error(400, "The upload is not a well-formed multipart form", { fields: { file: { message: err.message } } });
      throw err;
    }
    if (file === undefined) throw new V2Error(400, "file is required", { fields: { file: { message: "is required" } } });
    try {
      await replaceOriginal(ctx, doc, await spooledSource(file), file.path);
    } catch (err) {
      await rm(file.path, { force: true });
      throw err;
    }
    if (fields.get("confirmCopyright") === "true") {
      const row = (await ctx.deps.store.documentV2.get([doc.documentId])).get(doc.documentId);
      await ctx.deps.store.documentV2.setInfo(doc.documentId, { ...(row?.info ?? {}), isCopyrightConfirmed: true });
    }
    return json(await draftAnswer(ctx, doc.documentId));
  },
};
