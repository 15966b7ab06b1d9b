import { QuireError } from "../../domain/errors.ts";
import type { ActionHandler } from "./action.ts";
import { readEmbedId } from "./document-embed-params.ts";
import { checkOutputParams } from "../output-format.ts";

/** `svc.document_embed.delete` (decisions §8): empty `ok`; an embed the account does not have is 090. */
export const documentEmbedDelete: ActionHandler = async (ctx) => {
  const embedId = readEmbedId(ctx.params.get);
  checkOutputParams(ctx.params);
  if (!(await ctx.deps.store.embeds.delete(ctx.caller.accountId, embedId))) throw new QuireError("090");
  return undefined;
};
