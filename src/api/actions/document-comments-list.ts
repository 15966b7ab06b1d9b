import { COMMENT_FIELDS, COMMENT_STATES, commentView } from "../../domain/comments.ts";
import { invalid, QuireError } from "../../domain/errors.ts";
import { readEnumList, readListTail, resultList } from "../list-params.ts";
import type { ActionHandler } from "./action.ts";

/**
 * `svc.document_comments.list` (decisions §16): the caller's comments, of one document (its
 * `documentId`, or `name`, which accepts a documentId too) or of all, in the `states` asked for
 * (all by default), by time of posting, paged as `svc.documents.list`. Parameters in the order
 * `documentId`, `name`, `states`, `commentSortBy` (`created`), `resultOrder`, `startIndex`,
 * `pageSize`, `responseParams`; naming both `documentId` and `name` is 201 on `name`; a document
 * the caller does not have is 300.
 */
export const documentCommentsList: ActionHandler = async ({ params, caller, deps }) => {
  const get = params.get;
  const documentId = get("documentId");
  const name = get("name");
  if (documentId !== undefined && name !== undefined) throw invalid("name");
  const states = readEnumList(get, "states", COMMENT_STATES);
  const { order, window, keep } = readListTail(params, { field: "commentSortBy", allowed: ["created"] as const, fallback: "created" }, COMMENT_FIELDS);
  let docId: string | undefined;
  if (documentId !== undefined || name !== undefined) {
    const doc = documentId !== undefined
      ? await deps.store.documents.getById(caller.accountId, documentId)
      : await deps.store.documents.getByNameOrId(caller.accountId, name!);
    if (!doc) throw new QuireError("300");
    docId = doc.documentId;
  }
  const { totalCount, items } = await deps.store.comments.list({ accountId: caller.accountId, documentId: docId, states, order, ...window });
  return resultList(items.map(commentView), totalCount, window, keep);
};
