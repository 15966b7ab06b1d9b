import type { DocumentRecord } from "./document.ts";
import { wholeNumber, type ParamGetter } from "./document-options.ts";
import { invalid, missing, QuireError } from "./errors.ts";
import { escapeText } from "./escape-text.ts";

/** Pixel sizes beyond this are refused (201): no page embeds a reader larger than that. */
export const MAX_EMBED_PIXELS = 10_000;
export const DEFAULT_WIDTH = 525;
export const DEFAULT_HEIGHT = 340;

/** What an embed code is made of (a stored `documentEmbed`). */
export interface EmbedShape {
  id: number;
  readerStartPage: number;
  width: number;
  height: number;
}

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

/** A document (found, or 300) that can be embedded: 307 while converting, 308 if failed. */
export function assertEmbeddable(doc: DocumentRecord | undefined): DocumentRecord {
  if (!doc) throw new QuireError("300");
  if (doc.state === "P") throw new QuireError("307");
  if (doc.state === "F") throw new QuireError("308");
  return doc;
}

/** 311 when the start page is beyond the document's pages. */
export function assertStartPageExists(doc: Pick<DocumentRecord, "pageCount">, page: number): void {
  if (page > doc.pageCount) throw new QuireError("311");
}

/**
 * The embed code (`svc.document_embed.get_html_code`, and the app's sharing page): an iframe of
 * the reader's embed page `/<username>/docs/<name>/embed?embed=<id>&page=<readerStartPage>` at the
 * embed's size. The address is absolute on `origin` (QUIRE_PUBLIC_URL, else the origin the
 * request was sent to: a code pasted on another site must not point at that site), relative only
 * when there is none. Every attribute value is HTML-escaped.
 */
export function embedHtml(e: EmbedShape, doc: { username: string; name: string; title: string }, origin: string | undefined): string {
  const path = `/${encodeURIComponent(doc.username)}/docs/${encodeURIComponent(doc.name)}/embed`;
  const src = `${origin ?? ""}${path}?embed=${e.id}&page=${e.readerStartPage}`;
  const attrs: Array<[string, string]> = [
    ["src", src],
    ["width", String(e.width)],
    ["height", String(e.height)],
    ["title", doc.title],
    ["style", "border:0"],
  ];
  return `<iframe ${attrs.map(([k, v]) => `${k}="${escapeText(v)}"`).join(" ")} allowfullscreen></iframe>`;
}
