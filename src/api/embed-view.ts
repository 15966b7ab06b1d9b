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

export { embedHtml } from "../domain/embeds.ts";
