import { formatDate } from "../domain/values.ts";
import type { EmbedRecord } from "../store/embeds.ts";
import type { Resource } from "./payload.ts";

/** A `documentEmbed` as answered (decisions §8), in a fixed field order. */
export function embedView(e: EmbedRecord): Resource {
  return {
    tag: "documentEmbed",
    fields: [
      ["id", e.id],
      ["dataConfigId", `${e.accountId}/${e.id}`],
      ["documentId", e.documentId],
      ["readerStartPage", e.readerStartPage],
      ["width", e.width],
      ["height", e.height],
      ["created", formatDate(e.createdAt)],
    ],
  };
}

/** The field names of a `documentEmbed`, for `responseParams`. */
export const EMBED_FIELDS = ["id", "dataConfigId", "documentId", "readerStartPage", "width", "height", "created"] as const;

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for an HTML attribute value in double quotes (and for text content). */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * The snippet of `svc.document_embed.get_html_code`: an iframe of the reader's embed page
 * `/<username>/docs/<name>/embed?embed=<id>&page=<readerStartPage>` at the embed's size. The
 * address is absolute on QUIRE_PUBLIC_URL when that is set, else relative to the server's root.
 * Every attribute value is HTML-escaped.
 */
export function embedHtml(
  e: EmbedRecord,
  doc: { username: string; name: string; title: string },
  publicUrl: string | undefined,
): string {
  const path = `/${encodeURIComponent(doc.username)}/docs/${encodeURIComponent(doc.name)}/embed`;
  const src = `${publicUrl ?? ""}${path}?embed=${e.id}&page=${e.readerStartPage}`;
  const attrs: Array<[string, string]> = [
    ["src", src],
    ["width", String(e.width)],
    ["height", String(e.height)],
    ["title", doc.title],
    ["style", "border:0"],
  ];
  return `<iframe ${attrs.map(([k, v]) => `${k}="${escapeHtml(v)}"`).join(" ")} allowfullscreen></iframe>`;
}
