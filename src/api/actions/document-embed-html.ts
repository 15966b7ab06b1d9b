import { QuireError } from "../../domain/errors.ts";
import { embedHtml } from "../embed-view.ts";
import type { ActionHandler } from "./action.ts";
import { readEmbedId } from "./document-embed-params.ts";
import { checkOutputParams } from "../output-format.ts";
import { linkOrigin } from "../../ops/request-origin.ts";

/** `svc.document_embed.get_html_code` (decisions §8): the iframe snippet itself, as text/html. */
export const documentEmbedGetHtmlCode: ActionHandler = async (ctx) => {
  const embedId = readEmbedId(ctx.params.get);
  checkOutputParams(ctx.params);
  const { accountId } = ctx.caller;
  const embed = await ctx.deps.store.embeds.get(accountId, embedId);
  if (!embed) throw new QuireError("090");
  const doc = await ctx.deps.store.documents.getById(accountId, embed.documentId);
  if (!doc) throw new QuireError("090");
  return { tag: "html", html: embedHtml(embed, doc, linkOrigin(ctx.deps.config, ctx.origin).origin) };
};
