import { commentView, parseCommentId, parseCommentState } from "../../domain/comments.ts";
import { invalid } from "../../domain/errors.ts";
import { checkOutputParams } from "../output-format.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document_comment.update` (decisions §16): `commentId` and `state` (`pending`, `approved`,
 * `hidden`), both required; answers the `comment`. A comment the caller does not have is 201 on
 * `commentId`, as an unknown folderId or bookmarkId is (decisions §9).
 */
export const documentCommentUpdate: ActionHandler = async ({ params, caller, deps, now }) => {
  const commentId = parseCommentId(params.get("commentId"));
  const state = parseCommentState(params.get("state"));
  checkOutputParams(params);
  const store = deps.store.comments;
  await store.setState(caller.accountId, [commentId], state, now);
  const comment = await store.get(caller.accountId, commentId);
  if (!comment) throw invalid("commentId");
  return commentView(comment);
};
