import { QuireError } from "../../domain/errors.ts";
import type { EmbedChanges } from "../../store/embeds.ts";
import { embedView } from "../embed-view.ts";
import type { ActionHandler } from "./action.ts";
import { assertPageExists, embeddableDocument, readEmbedId, readEmbedShape } from "./document-embed-params.ts";
import { checkOutputParams } from "../output-format.ts";

/**
 * `svc.document_embed.update` (decisions §8): parameters left out stay as they are. A new
 * `documentId` is checked as in `add`; the resulting start page must exist in the resulting document.
 */
export const documentEmbedUpdate: ActionHandler = async (ctx) => {
  const get = ctx.params.get;
  const embedId = readEmbedId(get);
  const documentId = get("documentId");
  const shape = readEmbedShape(get);
  checkOutputParams(ctx.params);
  const { accountId } = ctx.caller;
  const embed = await ctx.deps.store.embeds.get(accountId, embedId);
  if (!embed) throw new QuireError("090");
  const changes: EmbedChanges = { ...shape };
  if (documentId !== undefined || shape.readerStartPage !== undefined) {
    const doc =
      documentId !== undefined
        ? await embeddableDocument(ctx, documentId)
        : await ctx.deps.store.documents.getById(accountId, embed.documentId);
    if (!doc) throw new QuireError("090");
    assertPageExists(doc, shape.readerStartPage ?? embed.readerStartPage);
    if (documentId !== undefined) changes.documentId = doc.documentId;
  }
  const updated = await ctx.deps.store.embeds.update(accountId, embedId, changes, ctx.now);
  if (!updated) throw new QuireError("090");
  return embedView(updated);
};
