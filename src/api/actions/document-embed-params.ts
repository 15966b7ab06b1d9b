import type { DocumentRecord } from "../../domain/document.ts";
import { invalid, missing, QuireError } from "../../domain/errors.ts";
import { wholeNumber, type ParamGetter } from "../../domain/document-options.ts";
import type { ActionContext } from "./action.ts";

/** Pixel sizes beyond this are refused (201): no page embeds a reader larger than that. */
export const MAX_EMBED_PIXELS = 10_000;
export const DEFAULT_WIDTH = 525;
export const DEFAULT_HEIGHT = 340;

/** `embedId`, required: a whole number in decimal digits, else 201 (an unknown number is 090 later). */
export function readEmbedId(get: ParamGetter): number {
  const value = get("embedId");
  if (value === undefined) throw missing("embedId");
  if (!/^\d{1,15}$/.test(value)) throw invalid("embedId");
  return Number(value);
}

/** `readerStartPage`, `width`, `height` as sent (undefined when not sent), in table order. */
export function readEmbedShape(get: ParamGetter): { readerStartPage?: number; width?: number; height?: number } {
  const readerStartPage = wholeNumber(get, "readerStartPage", 1, 999_999_999);
  const width = wholeNumber(get, "width", 1, MAX_EMBED_PIXELS);
  const height = wholeNumber(get, "height", 1, MAX_EMBED_PIXELS);
  return {
    ...(readerStartPage !== undefined ? { readerStartPage } : {}),
    ...(width !== undefined ? { width } : {}),
    ...(height !== undefined ? { height } : {}),
  };
}

/** A document of the caller that can be embedded: 300 if none, 307 while converting, 308 if failed. */
export async function embeddableDocument(ctx: ActionContext, documentId: string): Promise<DocumentRecord> {
  const doc = await ctx.deps.store.documents.getById(ctx.caller.accountId, documentId);
  if (!doc) throw new QuireError("300");
  if (doc.state === "P") throw new QuireError("307");
  if (doc.state === "F") throw new QuireError("308");
  return doc;
}

/** 311 when the start page is beyond the document's pages. */
export function assertPageExists(doc: DocumentRecord, page: number): void {
  if (page > doc.pageCount) throw new QuireError("311");
}
