import { missing } from "../../domain/errors.ts";
import { embedView } from "../embed-view.ts";
import type { ActionHandler } from "./action.ts";
import { assertPageExists, DEFAULT_HEIGHT, DEFAULT_WIDTH, embeddableDocument, readEmbedShape } from "./document-embed-params.ts";
import { checkOutputParams } from "../output-format.ts";

/** `svc.document_embed.add` (decisions §8): an embed of one of the caller's active documents. */
export const documentEmbedAdd: ActionHandler = async (ctx) => {
  const get = ctx.params.get;
  const documentId = get("documentId");
  if (documentId === undefined) throw missing("documentId");
  const shape = readEmbedShape(get);
  checkOutputParams(ctx.params);
  const doc = await embeddableDocument(ctx, documentId);
  const readerStartPage = shape.readerStartPage ?? 1;
  assertPageExists(doc, readerStartPage);
  const embed = await ctx.deps.store.embeds.insert({
    accountId: ctx.caller.accountId,
    documentId: doc.documentId,
    readerStartPage,
    width: shape.width ?? DEFAULT_WIDTH,
    height: shape.height ?? DEFAULT_HEIGHT,
    createdAt: ctx.now,
  });
  return embedView(embed);
};
