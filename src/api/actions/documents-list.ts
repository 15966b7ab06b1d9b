import { buildNewDocument } from "../../domain/document.ts";
import { ORG_DOC_TYPES } from "../../domain/formats.ts";
import { DOCUMENT_SORT_FIELDS, type DocumentSortField } from "../../store/documents.ts";
import { documentView } from "../document-view.ts";
import { fieldNamesOf, readEnumList, readListTail, resultList } from "../list-params.ts";
import type { ActionHandler } from "./action.ts";
import { optionalAccess, text } from "../../domain/document-options.ts";

/** Without `documentSortBy` the list is in order of publication (docs/api.md, "Account operations"). */
export const DEFAULT_DOCUMENT_SORT: DocumentSortField = "publishDate";

export const STATES = ["A", "F", "P"] as const;
/** The supported formats, and `unknown`: what a URL upload records until its file is fetched (decisions §5). */
const LISTED_DOC_TYPES = [...ORG_DOC_TYPES, "unknown"] as const;
const ORIGINS = ["apiupload", "apislurp"] as const;
/** orgDocName holds a file name or an address (at most 2048 characters). */
const MAX_ORG_DOC_NAME = 2048;

/** The names `responseParams` may keep: every field of a document answer. */
export const DOCUMENT_FIELDS = fieldNamesOf(
  documentView(
    buildNewDocument(
      { documentId: "", revisionId: "", publicationId: "" },
      { accountId: 0, username: "", origin: "apiupload", orgDocType: "pdf", orgDocName: "", defaultTitle: "", slurpUrl: "", originalSize: 0, blobId: "" },
      {
        name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "",
        language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
        publishDate: undefined, folderIds: [],
      },
      0,
    ),
  ),
);

/** `svc.documents.list` (decisions §8): the caller's own documents, filtered, sorted and paged by the store. */
export const documentsList: ActionHandler = async ({ params, caller, deps }) => {
  const get = params.get;
  const access = optionalAccess(get);
  const states = readEnumList(get, "documentStates", STATES);
  const orgDocTypes = readEnumList(get, "orgDocTypes", LISTED_DOC_TYPES);
  const origins = readEnumList(get, "origins", ORIGINS);
  const orgDocName = text(get, "orgDocName", MAX_ORG_DOC_NAME);
  const { sortBy, order, window, keep } = readListTail(
    params,
    { field: "documentSortBy", allowed: DOCUMENT_SORT_FIELDS, fallback: DEFAULT_DOCUMENT_SORT },
    DOCUMENT_FIELDS,
  );
  const { totalCount, records } = await deps.store.documents.list({
    accountId: caller.accountId, access, states, orgDocTypes, origins, orgDocName, sortBy, order, ...window,
  });
  return resultList(records.map(documentView), totalCount, window, keep);
};
