import { hash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import type { Config } from "../config.ts";
import { IMAGE_EXTENSION, IMAGE_MIME_TYPE, imageFormatOf, THUMB_VARIANT_WIDTH, VARIANT_EXTENSION, VARIANT_MIME_TYPE } from "../domain/page-images.ts";
import { pageVariants } from "../page-variants.ts";
import type { DocumentRecord } from "../domain/document.ts";
import { isValidUsername } from "../domain/values.ts";
import type { Store } from "../store/open-store.ts";
import { acceptsWebp, COVER_SIZES, docPath, imageVersion, PAGE_SIZES, profilePath, variantOf } from "./document-paths.ts";
import { Answer, AnswerCache, encodingFor, sendAnswer, sendBody } from "./page-answers.ts";
import { documentTextReader, pageJson, searchPages } from "./page-text.ts";
import { plainHttpOrigin, publicOrigin } from "./public-origin.ts";
import { PROFILE_PAGE_SIZE, profilePage } from "./profile-page.ts";
import { folderPage } from "./folder-page.ts";
import { HOME_RECENT, homePage } from "./home-page.ts";
import { failedPage, notFoundPage, processingPage, readerPage } from "./reader-page.ts";
import { readerFeedback, COMMENTS_PAGE_SIZE } from "./reader-comments.ts";
import { registerReaderFeedbackRoutes } from "./reader-feedback-routes.ts";
import { publicSearch, registerSearchRoutes, searchQueryOf } from "./search-routes.ts";
import { anonymousBudget, searchBusy, tooManyRequests } from "./anonymous-budget.ts";
import { askedSearch, readerQueryText, readerVariant } from "./reader-address.ts";
import { readerRenderPool } from "./reader-render-pool.ts";
import { SearchBusyError } from "../store/search-gate.ts";
import { isReservedUsername } from "../domain/reserved-usernames.ts";
import { MovedDocument, renamedAddress } from "./renamed-documents.ts";
import { sitemapXml } from "./sitemap.ts";
import { registerStatistics } from "./stats-routes.ts";
import { loadWebAssets } from "./web-assets.ts";
import { IMMUTABLE, sendWithEtag, setPageHeaders } from "./web-headers.ts";

export interface WebDeps {
  config: Readonly<Config>;
  store: Store;
  blobs: BlobStore;
}

const HTML = "text/html; charset=utf-8";
/** HTML may change on any update of the document: always revalidated, cheaply thanks to the ETag. */
const REVALIDATE = "no-cache";
const SITEMAP_LIMIT = 50_000;
/** Built reader pages and page texts kept, in bytes (a 2000-page reader is a few MB of HTML). */
const ANSWER_CACHE_BYTES = 64 * 1024 * 1024;
/** `revisionId-publicationId` (decisions §5). */
const DOCUMENT_ID_RE = /^[0-9]{12}-[0-9a-f]{32}$/;
/** Folder ids are UUIDs as `randomUUID` makes them (decisions §7). */
const FOLDER_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const ORIGINAL_TYPES: Record<string, string> = {
  pdf: "application/pdf",
  odt: "application/vnd.oasis.opendocument.text",
  odp: "application/vnd.oasis.opendocument.presentation",
  doc: "application/msword",
  ppt: "application/vnd.ms-powerpoint",
  rtf: "application/rtf",
  wpd: "application/vnd.wordperfect",
  sxw: "application/vnd.sun.xml.writer",
  sxi: "application/vnd.sun.xml.impress",
};

type DocParams = { username: string; name: string };
type Query = Record<string, string | undefined>;

/**
 * A record's digest, for the keys of the pages made from it (a short key, where its text was
 * hashed again at every lookup): made once per record object, since a reader's document is the
 * same (frozen) object while the database has not changed (public-pages.ts).
 */
const recordDigests = new WeakMap<DocumentRecord, string>();
function recordDigest(doc: DocumentRecord): string {
  let digest = recordDigests.get(doc);
  if (digest === undefined) {
    digest = hash("sha256", JSON.stringify(doc), "base64url");
    recordDigests.set(doc, digest);
  }
  return digest;
}

/** The first value of each name, as URLSearchParams decodes them. */
function queryOf(url: string): Query {
  const q = url.indexOf("?");
  // No prototype: `?__proto__=…` is a name like any other.
  const query: Query = Object.create(null) as Query;
  if (q === -1) return query;
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) if (!Object.hasOwn(query, k)) query[k] = v;
  return query;
}

function firstValue(v: unknown): string | undefined {
  return typeof v === "string" ? v : Array.isArray(v) && typeof v[0] === "string" ? v[0] : undefined;
}

function positiveInt(v: unknown): number | undefined {
  const s = firstValue(v);
  return s !== undefined && /^[1-9][0-9]{0,8}$/.test(s) ? Number(s) : undefined;
}

/** The public pages of decisions §10, as an encapsulated plugin: its hooks never touch the API. */
export async function registerWebRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const assets = loadWebAssets();
  const repo = deps.store.publicPages;
  const readText = documentTextReader(deps.blobs, { maxPageChars: deps.config.textMaxPageChars, maxDocumentChars: deps.config.textMaxDocumentChars });
  const answers = new AnswerCache(ANSWER_CACHE_BYTES);
  const assetAnswers = new Map([...assets.byPath].map(([path, a]) => [path, new Answer(a.body)]));
  /** The blob, or undefined when it is not there (a document deleted meanwhile, a store repaired by hand). */
  const blobOrMissing = (key: string) =>
    deps.blobs.get(key).catch((err: unknown) => {
      if ((err as { code?: string } | undefined)?.code === "ENOENT") return undefined;
      throw err;
    });
  const origin = (req: FastifyRequest) => publicOrigin(deps.config, req);
  const variants = pageVariants(deps.blobs);
  app.addHook("onClose", () => variants.close());
  const budget = anonymousBudget({ burst: deps.config.anonymousBurst, perSecond: deps.config.anonymousPerSecond });
  const readerSearches = readerRenderPool({ queue: deps.config.searchQueue });
  app.addHook("onClose", () => readerSearches.close());

  const notFound = (reply: FastifyReply) => {
    setPageHeaders(reply, { frameable: false, noindex: true });
    return reply.code(404).header("cache-control", "no-cache").type(HTML).send(notFoundPage(assets).value);
  };

  /**
   * The document at an address, or undefined for anything a reader must not tell apart from "no
   * such page". A document is named by its `documentId` until its conversion gives it a name from
   * its title (decisions §5), so that first address keeps finding it.
   */
  const findCurrent = async (p: DocParams): Promise<DocumentRecord | undefined> => {
    if (!isValidUsername(p.username) || isReservedUsername(p.username)) return undefined;
    const doc = await repo.documentByAddress(p.username, p.name);
    if (doc || !DOCUMENT_ID_RE.test(p.name)) return doc;
    return repo.documentById(p.username, p.name);
  };
  /** As findCurrent, and a name the document had before a rename finds it too (issue 26 item 4). */
  const findFollowingRenames = async (p: DocParams): Promise<DocumentRecord | undefined> =>
    (await findCurrent(p)) ?? (isValidUsername(p.username) && !isReservedUsername(p.username) ? repo.documentByOldName(p.username, p.name) : undefined);
  /** As findCurrent; at an old name, MovedDocument: the scope's error handler sends the address to the new one. */
  const findDoc = async (p: DocParams): Promise<DocumentRecord | undefined> => {
    const doc = await findCurrent(p);
    if (doc || !isValidUsername(p.username) || isReservedUsername(p.username)) return doc;
    const moved = await repo.documentByOldName(p.username, p.name);
    if (moved) throw new MovedDocument(moved);
    return undefined;
  };

  await app.register(async (web) => {
    // Every address with an old name in it (reader, embed, pages, covers, text, download…) goes to
    // the same address with the new name, for good: 301 (308 keeps a POST a POST). Cached an hour
    // only, since another document may take the name later and the address is then its own.
    web.setErrorHandler((err, req, reply) => {
      if (!(err instanceof MovedDocument)) throw err;
      return reply
        .header("cache-control", "public, max-age=3600")
        .redirect(renamedAddress(req.url, err.doc), req.method === "GET" || req.method === "HEAD" ? 301 : 308);
    });
    // The app leaves query strings unparsed (the API reads its own bytes); these pages want them.
    web.addHook("onRequest", (req, _reply, done) => {
      req.query = queryOf(req.url);
      done();
    });
    web.get<{ Params: { file: string } }>("/_assets/:file", async (req, reply) => {
      const asset = assets.byPath.get(`/_assets/${req.params.file}`);
      if (!asset) return notFound(reply);
      reply.header("x-content-type-options", "nosniff");
      return sendAnswer(req, reply, assetAnswers.get(asset.url)!, asset.contentType, IMMUTABLE);
    });

    // Browsers ask for it whatever the page says; the icon is the one the pages link to.
    web.get("/favicon.ico", async (_req, reply) => reply.redirect(assets.icon.url, 301));

    const counting = registerStatistics(web, { config: deps.config, store: deps.store, findDoc: findCurrent });
    registerSearchRoutes(web, { store: deps.store, assets, origin, findDoc: findFollowingRenames, notFound, budget, counting });
    await registerReaderFeedbackRoutes(web, { config: deps.config, store: deps.store, assets, findDoc, notFound });

    // `/`: the home page, or where the operator sends it (QUIRE_HOME, read once in src/config.ts).
    web.get("/", async (req, reply) => {
      if (deps.config.homeRedirect !== undefined) return reply.header("cache-control", "no-cache").redirect(deps.config.homeRedirect, 302);
      const recent = await repo.recentPublic(HOME_RECENT);
      setPageHeaders(reply, { frameable: false, noindex: false });
      return sendWithEtag(req, reply, homePage(recent, assets, origin(req)).value, HTML, REVALIDATE);
    });

    web.get("/robots.txt", async (req, reply) => {
      // A sitemap is named only where its absolute address is known (it is 404 otherwise).
      const base = origin(req);
      const body = `User-agent: *\nAllow: /\nDisallow: /*/download\n${base === undefined ? "" : `Sitemap: ${base}/sitemap.xml\n`}`;
      return sendWithEtag(req, reply, body, "text/plain; charset=utf-8", "public, max-age=3600");
    });

    web.get("/sitemap.xml", async (req, reply) => {
      const base = origin(req);
      // Its addresses must be absolute, and never made from an unchecked Host.
      if (base === undefined) return notFound(reply);
      const entries = (await repo.sitemapEntries(SITEMAP_LIMIT)).map((e) => ({ loc: base + docPath(e), lastmod: e.updatedAt }));
      return sendWithEtag(req, reply, sitemapXml(entries), "application/xml; charset=utf-8", REVALIDATE);
    });

    web.get<{ Params: { username: string }; Querystring: Query }>("/:username", async (req, reply) => {
      const { username } = req.params;
      if (!isValidUsername(username) || isReservedUsername(username)) return notFound(reply);
      const account = await repo.accountByUsername(username);
      if (!account) return notFound(reply);
      const page = positiveInt(req.query.page) ?? 1;
      const { totalCount, records } = await deps.store.documents.list({
        accountId: account.id, access: "public", states: ["A"], sortBy: "publishDate", order: "desc",
        startIndex: (page - 1) * PROFILE_PAGE_SIZE, pageSize: PROFILE_PAGE_SIZE,
      });
      let search;
      if (searchQueryOf(req.query).trim()) {
        const wait = budget.take(req);
        if (wait !== undefined) return tooManyRequests(reply, wait, { kind: "html", assets, frameable: false });
        search = await publicSearch(deps.store, req.query, profilePath(account.username), account.id).catch((err: unknown) => {
          if (err instanceof SearchBusyError) return undefined;
          throw err;
        });
        if (!search) return searchBusy(reply, assets);
      }
      counting.impressions(req, search ? search.matches.map((m) => m.record) : records);
      setPageHeaders(reply, { frameable: false, noindex: search !== undefined });
      const folders = page === 1 && !search ? await deps.store.folders.shownOnProfile(account.id) : [];
      const body = profilePage({ username: account.username, docs: records, totalCount, page, origin: origin(req), assets, search, folders });
      return sendWithEtag(req, reply, body.value, HTML, REVALIDATE);
    });

    // A folder its owner shows on the profile (issue 26 item 9). A hidden folder, another account's
    // folder under this name, or no folder at all: the same 404, so none can be told apart.
    web.get<{ Params: { username: string; folderId: string }; Querystring: Query }>("/:username/folders/:folderId", async (req, reply) => {
      const { username, folderId } = req.params;
      if (!isValidUsername(username) || isReservedUsername(username) || !FOLDER_ID_RE.test(folderId)) return notFound(reply);
      const account = await repo.accountByUsername(username);
      if (!account) return notFound(reply);
      const folder = await deps.store.folders.publicFolder(account.id, folderId);
      if (!folder) return notFound(reply);
      const page = positiveInt(req.query.page) ?? 1;
      const { totalCount, records } = await deps.store.folders.publicDocuments(folder.folderId, (page - 1) * PROFILE_PAGE_SIZE, PROFILE_PAGE_SIZE);
      counting.impressions(req, records);
      setPageHeaders(reply, { frameable: false, noindex: false });
      const body = folderPage({ username: account.username, folder, docs: records, totalCount, page, origin: origin(req), assets });
      return sendWithEtag(req, reply, body.value, HTML, REVALIDATE);
    });

    web.get<{ Params: { username: string } }>("/:username/folders", async (req, reply) =>
      isValidUsername(req.params.username) && !isReservedUsername(req.params.username)
        ? reply.redirect(profilePath(req.params.username), 301)
        : notFound(reply),
    );

    const reader = (embed: boolean) => async (req: FastifyRequest<{ Params: DocParams; Querystring: Query }>, reply: FastifyReply) => {
      const doc = await findDoc(req.params);
      if (!doc) return notFound(reply);
      if (doc.name !== req.params.name) {
        // Found by its documentId: the page lives at its name now ("being processed" reloads land here).
        const query = req.url.includes("?") ? req.url.slice(req.url.indexOf("?")) : "";
        return reply.header("cache-control", "no-cache").redirect(`${docPath(doc)}${embed ? "/embed" : ""}${query}`, 302);
      }
      const noindex = doc.access === "private";
      if (doc.state !== "A") {
        setPageHeaders(reply, { frameable: embed, noindex: true });
        const body = doc.state === "P" ? processingPage(doc, assets, await deps.store.pageRanges.progress(doc.documentId)) : failedPage(doc, assets);
        return sendWithEtag(req, reply, body.value, HTML, REVALIDATE);
      }
      // One address per variant (reader-address.ts): any other spelling is sent there, so only
      // canonical values reach the cache's key and the page.
      const variant = await readerVariant(req.query, doc.pageCount, embed ? (id) => repo.embedStartPage(doc.accountId, doc.documentId, id) : undefined);
      if (askedSearch(req.url) !== variant.search) {
        const to = `${docPath(doc)}${embed ? "/embed" : ""}${variant.search ? `?${variant.search}` : ""}`;
        if (!variant.permanent) reply.header("cache-control", "no-cache");
        return reply.redirect(to, variant.permanent ? 301 : 302);
      }
      const { startPage, query, consented } = variant;
      const params = new URLSearchParams(variant.search);
      params.set("consent", "1");
      const base = origin(req);
      // Everything the page is made of: the record, the variant asked for, the trusted origin.
      const key = `reader\0${recordDigest(doc)}\0${JSON.stringify([embed, startPage, query, consented, variant.search, base ?? null])}`;
      // A search builds a page each time, and a page not yet built is built once: both take from the address's budget.
      const wait = query || !answers.has(key) ? budget.take(req) : undefined;
      if (wait !== undefined) return tooManyRequests(reply, wait, { kind: "html", assets, frameable: embed });
      if (!doc.explicit || consented) counting.view(req, doc, { embedded: embed, startPage });
      setPageHeaders(reply, { frameable: embed, noindex: noindex || embed, mediaOrigin: plainHttpOrigin(doc.soundUrl) });
      const feedback = async () =>
        readerFeedback(doc, assets, {
          embed,
          comments: !embed && doc.commentsAllowed ? await deps.store.comments.approvedPage(doc.documentId, 0, COMMENTS_PAGE_SIZE) : undefined,
        });
      const build = async () => {
        const text = await readText(doc.blobId, doc.pageCount);
        // The record (in the key) carries the ratings and the comments' version: a change builds it again.
        return readerPage({ doc, pageHtml: text.html, origin: base, assets, embed, startPage, query, hits: undefined, consented, consentHref: `?${params.toString()}`, feedback: await feedback() }).value;
      };
      if (query) {
        // A search is one reader's: built and compressed for it, off the event loop, not kept in place of the pages everyone reads.
        const text = await readText(doc.blobId, doc.pageCount);
        const view = { doc, origin: base, embed, startPage, query, consented, consentHref: `?${params.toString()}`, feedbackHtml: (await feedback()).value };
        const encoding = encodingFor(req, Number.MAX_SAFE_INTEGER, HTML); // a reader page is always worth compressing
        const page = await readerSearches
          .render(`${doc.blobId}/${doc.pageCount}`, () => ({ html: text.html, folded: text.folded, text: text.text }), view, encoding)
          .catch((err: unknown) => {
            if (err instanceof SearchBusyError) return undefined;
            throw err;
          });
        if (!page) return searchBusy(reply, assets);
        // Says whether this request built the page (tests and operators see the cache working).
        reply.header("x-cache", "miss");
        return sendBody(req, reply, { etag: page.etag, encoding, bytes: () => page.bytes }, HTML, REVALIDATE);
      }
      const { answer, built } = await answers.get(key, build);
      // Says whether this request built the page (tests and operators see the cache working).
      reply.header("x-cache", built ? "miss" : "hit");
      return sendAnswer(req, reply, answer, HTML, REVALIDATE);
    };
    web.get("/:username/docs/:name", reader(false));
    web.get("/:username/docs/:name/embed", reader(true));

    web.get<{ Params: DocParams }>("/:username/docs/:name/download", async (req, reply) => {
      const doc = await findDoc(req.params);
      // Not downloadable means no address at all leads to the original (decisions §10).
      if (!doc || doc.state !== "A" || !doc.downloadable) return notFound(reply);
      const fileName = doc.orgDocName.replace(/^.*[\\/]/, "") || `${doc.name}.${doc.orgDocType}`;
      const ascii = fileName.replace(/[^\x20-\x7E]|["\\]/g, "_");
      reply
        .header("content-disposition", `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`)
        .header("cache-control", "private, no-cache")
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", "default-src 'none'; sandbox");
      if (doc.access === "private") reply.header("x-robots-tag", "noindex, nofollow");
      const original = await blobOrMissing(blobKeys.original(doc.blobId));
      if (!original) return notFound(reply.removeHeader("content-disposition"));
      counting.download(req, doc);
      return reply.type(ORIGINAL_TYPES[doc.orgDocType] ?? "application/octet-stream").send(original);
    });

    /** Page images, covers and text of an active document, immutable when asked for with the document's version. */
    const sendDocBlob = async (
      req: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply, doc: DocumentRecord, key: string,
      /** The content type, or how the body tells it (a page variant may be a JPEG where WebP was asked for). */
      type: string | ((body: Buffer) => string),
      body: () => Promise<unknown> = () => blobOrMissing(key),
    ) => {
      const version = imageVersion(doc);
      const etag = `"${version}-${key.slice(key.indexOf("/", 10) + 1).replace(/[^A-Za-z0-9.-]/g, "_")}"`;
      reply
        .header("etag", etag)
        .header("cache-control", firstValue(req.query.v) === version ? IMMUTABLE.replace("public", doc.access === "private" ? "private" : "public") : REVALIDATE)
        .header("x-content-type-options", "nosniff")
        .header("cross-origin-resource-policy", "same-origin");
      if (doc.access === "private") reply.header("x-robots-tag", "noindex, nofollow");
      if ((req.headers["if-none-match"] ?? "").split(",").some((t) => t.trim() === etag)) return reply.code(304).send();
      const found = await body();
      // A 404 must not be kept by caches as if it were the immutable image.
      if (!found) return notFound(reply.removeHeader("etag").removeHeader("cache-control").removeHeader("vary"));
      return reply.type(typeof type === "string" ? type : type(found as Buffer)).send(found);
    };

    web.get<{ Params: DocParams & { size: string; file: string }; Querystring: Query }>(
      "/:username/docs/:name/pages/:size/:file",
      async (req, reply) => {
        const variant = variantOf(req.params.size, req.params.file);
        if (variant) {
          const doc = await findDoc(req.params);
          if (!doc || doc.state !== "A" || variant.page > doc.pageCount) return notFound(reply);
          // One address per width; the format follows Accept, so caches keep one copy per format.
          const format = acceptsWebp(req.headers.accept) ? "webp" : "jpeg";
          reply.header("vary", "Accept");
          const key = blobKeys.pageVariant(doc.blobId, variant.page, variant.width, VARIANT_EXTENSION[format]);
          return sendDocBlob(req, reply, doc, key, (body) => VARIANT_MIME_TYPE[imageFormatOf(body)], async () => (await variants.get(doc.blobId, variant.page, variant.width, format))?.body);
        }
        const m = new RegExp(`^([1-9][0-9]{0,5})\\.${IMAGE_EXTENSION}$`).exec(req.params.file);
        const size = PAGE_SIZES.find((s) => s === req.params.size);
        if (!m || !size) return notFound(reply);
        const doc = await findDoc(req.params);
        const n = Number(m[1]);
        if (!doc || doc.state !== "A" || n > doc.pageCount) return notFound(reply);
        const key = blobKeys.page(doc.blobId, n, size, IMAGE_EXTENSION);
        // Documents converted since issue 30 have no stored thumbnail: its old address gets the JPEG variant.
        const thumbVariant = async () => (await variants.get(doc.blobId, n, THUMB_VARIANT_WIDTH, "jpeg"))?.body;
        return sendDocBlob(req, reply, doc, key, IMAGE_MIME_TYPE, async () => (await blobOrMissing(key)) ?? (size === "thumb" ? thumbVariant() : undefined));
      },
    );

    web.get<{ Params: DocParams & { file: string }; Querystring: Query }>("/:username/docs/:name/cover/:file", async (req, reply) => {
      const size = COVER_SIZES.find((s) => req.params.file === `${s}.${IMAGE_EXTENSION}`);
      if (!size) return notFound(reply);
      const doc = await findDoc(req.params);
      if (!doc || doc.state !== "A") return notFound(reply);
      return sendDocBlob(req, reply, doc, blobKeys.cover(doc.blobId, size, IMAGE_EXTENSION), IMAGE_MIME_TYPE);
    });

    // The text layer's words, one page at a time: a view never needs the whole document's text.
    web.get<{ Params: DocParams & { file: string }; Querystring: Query }>("/:username/docs/:name/text/:file", async (req, reply) => {
      const m = /^([1-9][0-9]{0,5})\.json$/.exec(req.params.file);
      if (!m) return notFound(reply);
      const doc = await findDoc(req.params);
      const n = Number(m[1]);
      if (!doc || doc.state !== "A" || n > doc.pageCount) return notFound(reply);
      const version = imageVersion(doc);
      reply
        .header("cache-control", firstValue(req.query.v) === version ? IMMUTABLE.replace("public", doc.access === "private" ? "private" : "public") : REVALIDATE)
        .header("x-content-type-options", "nosniff")
        .header("cross-origin-resource-policy", "same-origin");
      if (doc.access === "private") reply.header("x-robots-tag", "noindex, nofollow");
      const textKey = `text/${doc.blobId}/${doc.pageCount}/${n}`;
      const wait = answers.has(textKey) ? undefined : budget.take(req);
      if (wait !== undefined) return tooManyRequests(reply.removeHeader("cache-control"), wait, { kind: "json" });
      const { answer } = await answers.get(textKey, async () => pageJson(await readText(doc.blobId, doc.pageCount), n));
      return sendAnswer(req, reply, answer, "application/json; charset=utf-8", reply.getHeader("cache-control") as string);
    });

    // The reader's search with script: the pages holding every word of `q`, from the bounded text.
    web.get<{ Params: DocParams; Querystring: Query }>("/:username/docs/:name/search.json", async (req, reply) => {
      const doc = await findDoc(req.params);
      if (!doc || doc.state !== "A") return notFound(reply);
      const query = readerQueryText(firstValue(req.query.q) ?? "");
      const wait = query ? budget.take(req) : undefined;
      if (wait !== undefined) return tooManyRequests(reply, wait, { kind: "json" });
      const hits = query ? searchPages(await readText(doc.blobId, doc.pageCount), query) : [];
      reply.header("x-content-type-options", "nosniff");
      if (doc.access === "private") reply.header("x-robots-tag", "noindex, nofollow");
      return sendWithEtag(req, reply, JSON.stringify({ hits }), "application/json; charset=utf-8", REVALIDATE);
    });

    // What the "being processed" page polls: the state alone, never cached.
    web.get<{ Params: DocParams }>("/:username/docs/:name/state.json", async (req, reply) => {
      const doc = await findDoc(req.params);
      if (!doc) return notFound(reply);
      // A document converted as page ranges also says how many of its pages are ready.
      const progress = doc.state === "P" ? await deps.store.pageRanges.progress(doc.documentId) : undefined;
      return reply.header("cache-control", "no-store").header("x-content-type-options", "nosniff").send({ state: doc.state, ...progress });
    });

    web.get<{ Params: DocParams; Querystring: Query }>("/:username/docs/:name/text.json", async (req, reply) => {
      const doc = await findDoc(req.params);
      if (!doc || doc.state !== "A") return notFound(reply);
      // The whole document's text, read from the blob store each time: a share of the budget.
      const wait = budget.take(req);
      if (wait !== undefined) return tooManyRequests(reply, wait, { kind: "json" });
      return sendDocBlob(req, reply, doc, blobKeys.text(doc.blobId), "application/json; charset=utf-8");
    });

    // Without this a trailing "/docs" or a typo would reach Fastify's JSON 404.
    web.get<{ Params: { username: string } }>("/:username/docs", async (req, reply) =>
      isValidUsername(req.params.username) && !isReservedUsername(req.params.username)
        ? reply.redirect(profilePath(req.params.username), 301)
        : notFound(reply),
    );
  });
}
