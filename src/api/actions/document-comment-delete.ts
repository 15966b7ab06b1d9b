import { parseCommentId } from "../../domain/comments.ts";
import { invalid } from "../../domain/errors.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document_comment.delete` (decisions §16): `commentId` required; an empty `ok`. A comment
 * the caller does not have (another account's, or one already deleted) is 201 on `commentId`.
 */
export const documentCommentDelete: ActionHandler = async ({ params, caller, deps }) => {
  const commentId = parseCommentId(params.get("commentId"));
  checkOutputParams(params);
  if ((await deps.store.comments.delete(caller.accountId, [commentId])) === 0) throw invalid("commentId");
  return undefined;
};
