import type { DocumentRecord } from "../../domain/document.ts";
import { assertEmbeddable } from "../../domain/embeds.ts";
import type { ActionContext } from "./action.ts";

export { DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_EMBED_PIXELS, readEmbedId, readEmbedShape, assertStartPageExists as assertPageExists } from "../../domain/embeds.ts";

/** A document of the caller that can be embedded: 300 if none, 307 while converting, 308 if failed. */
export async function embeddableDocument(ctx: ActionContext, documentId: string): Promise<DocumentRecord> {
  return assertEmbeddable(await ctx.deps.store.documents.getById(ctx.caller.accountId, documentId));
}
