import { optionalAccess, text } from "../../domain/document-options.ts";
import { missing, QuireError } from "../../domain/errors.ts";
import { HITS_PER_DOCUMENT, MAX_QUERY_CHARS, parseSearchQuery } from "../../domain/search-query.ts";
import { SearchBusyError } from "../../store/search-gate.ts";
import type { SearchMatch } from "../../store/search-index.ts";
import { documentView } from "../document-view.ts";
import { readEnumList, readPageSize, readResponseParams, readStartIndex, resultList } from "../list-params.ts";
import { checkOutputParams } from "../output-format.ts";
import type { Resource } from "../payload.ts";
import type { ActionHandler } from "./action.ts";
import { DOCUMENT_FIELDS, STATES } from "./documents-list.ts";

/** A document found, with the two fields a search adds (decisions §11). */
function matchView(m: SearchMatch): Resource {
  const doc = documentView(m.record);
  return {
    tag: doc.tag,
    fields: [
      ...doc.fields,
      // Rounded: the ranks are floating point sums, and clients compare what they see.
      ["score", Math.round(m.score * 1e6) / 1e6],
      ["hits", { records: m.hits.map((h) => ({ page: h.page, snippet: h.snippet })), itemTag: "hit" }],
    ],
  };
}

const SEARCH_FIELDS = [...DOCUMENT_FIELDS, "score", "hits"];

/**
 * `svc.documents.search` (decisions §11): the caller's documents whose title, description, tags
 * or text match `q`, best first (ties by documentId), each with the pages that matched.
 */
export const documentsSearch: ActionHandler = async ({ params, caller, deps }) => {
  const get = params.get;
  const q = text(get, "q", MAX_QUERY_CHARS);
  if (q === undefined) throw missing("q");
  const access = optionalAccess(get);
  const states = readEnumList(get, "documentStates", STATES);
  const window = { startIndex: readStartIndex(get), pageSize: readPageSize(get) };
  const keep = readResponseParams(get, SEARCH_FIELDS);
  checkOutputParams(params);
  const { totalCount, matches } = await deps.store.search
    .search({
      query: parseSearchQuery(q),
      scope: { kind: "account", accountId: caller.accountId, access, states: states?.length ? states : ["A"] },
      ...window,
      maxHits: HITS_PER_DOCUMENT,
    })
    .catch((err: unknown) => {
      // Every search place taken and the queue full: the caller may try again shortly, as after any throttling.
      throw err instanceof SearchBusyError ? new QuireError("012") : err;
    });
  return resultList(matches.map(matchView), totalCount, window, keep);
};
