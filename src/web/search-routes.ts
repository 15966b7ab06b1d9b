import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DocumentRecord } from "../domain/document.ts";
import { HITS_PER_DOCUMENT, MAX_QUERY_CHARS, parseSearchQuery } from "../domain/search-query.ts";
import type { Store } from "../store/open-store.ts";
import { oembedAnswer, oembedJson, oembedTarget, oembedXml, readMaxSize } from "./oembed.ts";
import { SEARCH_PAGE_SIZE, siteSearchPage, type SearchResultsView } from "./search-page.ts";
import type { PublicCounting } from "./stats-routes.ts";
import type { WebAssets } from "./web-assets.ts";
import { sendWithEtag, setPageHeaders } from "./web-headers.ts";

type Query = Record<string, string | undefined>;

/** Result pages beyond this are not served: nobody reads them, and deep offsets cost the database. */
const MAX_RESULT_PAGE = 50;

export interface SearchRouteDeps {
  store: Store;
  assets: WebAssets;
  origin(req: FastifyRequest): string | undefined;
  findDoc(p: { username: string; name: string }): Promise<DocumentRecord | undefined>;
  notFound(reply: FastifyReply): FastifyReply;
  /** Readership counting: each result's card shown is an impression. */
  counting?: Pick<PublicCounting, "impressions">;
}

/** `q` as searched: at most 500 characters (longer is cut, as a search box would). */
export function searchQueryOf(query: Query): string {
  return (query.q ?? "").slice(0, MAX_QUERY_CHARS);
}

function resultPage(query: Query): number {
  const p = query.page;
  return p !== undefined && /^[1-9][0-9]{0,3}$/.test(p) ? Math.min(Number(p), MAX_RESULT_PAGE) : 1;
}

/** The public documents matching `q`, of every account or of one (decisions §11): never a private one. */
export async function publicSearch(store: Store, query: Query, here: string, accountId?: number): Promise<SearchResultsView> {
  const q = searchQueryOf(query);
  const page = resultPage(query);
  const { totalCount, matches } = q.trim()
    ? await store.search.search({
        query: parseSearchQuery(q),
        scope: { kind: "public", accountId },
        startIndex: (page - 1) * SEARCH_PAGE_SIZE,
        pageSize: SEARCH_PAGE_SIZE,
        maxHits: HITS_PER_DOCUMENT,
      })
    : { totalCount: 0, matches: [] };
  return { query: q, totalCount: Math.min(totalCount, MAX_RESULT_PAGE * SEARCH_PAGE_SIZE), matches, page, here, showOwner: accountId === undefined };
}

const OEMBED_TYPES = { json: "application/json; charset=utf-8", xml: "text/xml; charset=utf-8" } as const;

export function registerSearchRoutes(web: FastifyInstance, deps: SearchRouteDeps): void {
  web.get<{ Querystring: Query }>("/search", async (req, reply) => {
    const view = await publicSearch(deps.store, req.query, "/search");
    deps.counting?.impressions(req, view.matches.map((m) => m.record));
    setPageHeaders(reply, { frameable: false, noindex: true });
    return sendWithEtag(req, reply, siteSearchPage(view, deps.assets).value, "text/html; charset=utf-8", "no-cache");
  });

  // oEmbed: 404 for anything that is not an active document's reader here, 501 for a format other than json or xml.
  web.get<{ Querystring: Query }>("/oembed", async (req, reply) => {
    reply.header("x-content-type-options", "nosniff").header("access-control-allow-origin", "*");
    const format = req.query.format ?? "json";
    const plain = (code: number, text: string) => reply.code(code).header("cache-control", "no-cache").type("text/plain; charset=utf-8").send(text);
    if (format !== "json" && format !== "xml") return plain(501, "Not implemented: format must be json or xml.\n");
    const maxWidth = readMaxSize(req.query.maxwidth);
    const maxHeight = readMaxSize(req.query.maxheight);
    if (maxWidth === null || maxHeight === null) return plain(400, "maxwidth and maxheight are whole numbers of pixels.\n");
    // Absolute addresses only from a trusted origin: without one there is nothing to answer.
    const origin = deps.origin(req);
    const target = origin === undefined || req.query.url === undefined ? undefined : oembedTarget(req.query.url, origin);
    const doc = target && (await deps.findDoc(target));
    if (!origin || !target || !doc || doc.state !== "A") return plain(404, "Not found.\n");
    // A private document answers as its reader does (whoever has its address), never indexed.
    if (doc.access === "private") reply.header("x-robots-tag", "noindex, nofollow");
    const answer = oembedAnswer(doc, origin, target, { width: maxWidth, height: maxHeight });
    return sendWithEtag(req, reply, format === "json" ? oembedJson(answer) : oembedXml(answer), OEMBED_TYPES[format], "no-cache");
  });
}
