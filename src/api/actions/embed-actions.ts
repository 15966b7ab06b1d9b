import type { ActionHandler } from "./action.ts";
import { documentEmbedAdd } from "./document-embed-add.ts";
import { documentEmbedDelete } from "./document-embed-delete.ts";
import { documentEmbedGetHtmlCode } from "./document-embed-html.ts";
import { documentEmbedUpdate } from "./document-embed-update.ts";
import { documentEmbedsList } from "./document-embeds-list.ts";

/** The operations of this group, by name without prefix (registered in index.ts). */
export const EMBED_ACTIONS: ReadonlyArray<readonly [string, ActionHandler]> = [
  ["document_embed.add", documentEmbedAdd],
  ["document_embed.update", documentEmbedUpdate],
  ["document_embed.delete", documentEmbedDelete],
  ["document_embeds.list", documentEmbedsList],
  ["document_embed.get_html_code", documentEmbedGetHtmlCode],
];
