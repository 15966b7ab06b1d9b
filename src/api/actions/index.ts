import type { ActionHandler } from "./action.ts";
import { DOCUMENT_ACTIONS } from "./document-actions.ts";
import { documentCommentDelete } from "./document-comment-delete.ts";
import { documentCommentUpdate } from "./document-comment-update.ts";
import { documentCommentsList } from "./document-comments-list.ts";
import { documentUpload } from "./document-upload.ts";
import { documentUrlUpload } from "./document-url-upload.ts";
import { EMBED_ACTIONS } from "./embed-actions.ts";
import { FOLDER_ACTIONS } from "./folder-actions.ts";
import { WEBHOOK_ACTIONS } from "./webhook-actions.ts";

/** Every operation served, by its name without prefix. Names not here are 201 on `action`. */
export const ACTIONS: ReadonlyMap<string, ActionHandler> = new Map([
  ["document.upload", documentUpload],
  ["document.url_upload", documentUrlUpload],
  ...DOCUMENT_ACTIONS,
  ...FOLDER_ACTIONS,
  ...EMBED_ACTIONS,
  ...WEBHOOK_ACTIONS,
  ["document_comments.list", documentCommentsList],
  ["document_comment.update", documentCommentUpdate],
  ["document_comment.delete", documentCommentDelete],
]);

/**
 * Operations whose answer is computed from the request's parameters and the caller's documents
 * rows alone: their rendered answers may be cached under the account's `documentsVersion`.
 */
export const ANSWERS_FROM_DOCUMENTS_ONLY: ReadonlySet<string> = new Set(["documents.list"]);
