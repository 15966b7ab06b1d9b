import fastifyFormbody from "@fastify/formbody";
import { MovedDocument } from "./renamed-documents.ts";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import { checkCommentInput, COMMENT_PROBLEM_TEXT, parseStars, ratingSummary, type CommentInputProblem } from "../domain/comments.ts";
import type { DocumentRecord } from "../domain/document.ts";
import { utcDay } from "../domain/reader-identity.ts";
import { addressGroup } from "../ops/client-address.ts";
import { LeakyBuckets } from "../ops/leaky-buckets.ts";
import type { Store } from "../store/open-store.ts";
import { field } from "./app/app-context.ts";
import type { Html } from "./html.ts";
import { commentsPage, COMMENTS_PAGE_SIZE, errorPage, ratedPage, ratingText } from "./reader-comments.ts";
import type { WebAssets } from "./web-assets.ts";
import { setPageHeaders } from "./web-headers.ts";

/** A reader's comment and rating buckets each empty over this long. */
const FEEDBACK_WINDOW_MS = 15 * 60_000;

/** A rating or a comment form is small: nothing larger is read. */
const FORM_BODY_LIMIT = 16 * 1024;
const HTML = "text/html; charset=utf-8";

type DocParams = { username: string; name: string };
type Query = Record<string, string | undefined>;

export interface FeedbackDeps {
  config: Readonly<Pick<Config, "commentsPerAddress" | "ratingsPerAddress">>;
  store: Store;
  assets: WebAssets;
  findDoc(p: DocParams): Promise<DocumentRecord | undefined>;
  notFound(reply: FastifyReply): FastifyReply;
}

const MESSAGES = {
  pending: "Thank you. Your comment will appear once the publisher has approved it.",
  published: "Thank you. Your comment is published.",
  commentsOff: "Comments are turned off for this document.",
  ratingsOff: "Ratings are turned off for this document.",
  crossSite: "This form was sent from another site, so it was not accepted.",
  tooManyComments: "You have sent several comments in a short time. Please wait a few minutes and try again.",
  tooManyRatings: "You have sent many ratings in a short time. Please wait a few minutes and try again.",
  noStars: "Choose from 1 to 5 stars.",
} as const;

const FIELD_OF: Record<CommentInputProblem, string> = {
  "author-missing": "author", "author-too-long": "author", "text-missing": "text", "text-too-long": "text",
};

const wantsJson = (req: FastifyRequest) => (req.headers.accept ?? "").includes("application/json");

/**
 * A form another site made a reader's browser send (their comments, under their name): browsers
 * say where a request comes from in Sec-Fetch-Site, and in Origin on every POST.
 */
function isCrossSite(req: FastifyRequest): boolean {
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined) return site === "cross-site" || site === "same-site";
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    // req.host: the proxy's X-Forwarded-Host when QUIRE_TRUST_PROXY names it, the Host header otherwise.
    return new URL(origin).host !== req.host;
  } catch {
    return true;
  }
}

/**
 * The reader's rating and comment forms (decisions §16) and the comments' own pages, as an
 * encapsulated plugin with its own form parser. Registered by web-routes.ts beside the reader.
 */
export async function registerReaderFeedbackRoutes(web: FastifyInstance, deps: FeedbackDeps): Promise<void> {
  // Each bucket empties over 15 minutes: after a burst, one more comes back every 15 minutes / burst.
  const commentLimit = new LeakyBuckets(deps.config.commentsPerAddress, FEEDBACK_WINDOW_MS);
  const ratingLimit = new LeakyBuckets(deps.config.ratingsPerAddress, FEEDBACK_WINDOW_MS);
  /** Whether this address may send one more now (and counts it when so). */
  const allowed = (limit: LeakyBuckets, req: FastifyRequest) => limit.take(addressGroup(req.ip), Date.now());

  await web.register(async (scope) => {
    await scope.register(fastifyFormbody, { bodyLimit: FORM_BODY_LIMIT });

    /** An answer for the script (JSON) or for a browser without it (a page), never cached. */
    const answer = (req: FastifyRequest, reply: FastifyReply, status: number, json: Record<string, unknown>, page: () => Html) => {
      reply.code(status).header("cache-control", "no-store");
      if (wantsJson(req)) return reply.header("x-content-type-options", "nosniff").send(json);
      setPageHeaders(reply, { frameable: true, noindex: true });
      return reply.type(HTML).send(page().value);
    };

    // A failure says nothing of its cause (logged once); nothing was stored, since each write is one transaction.
    scope.setErrorHandler((err: FastifyError, req, reply) => {
      // An old name: the public pages' handler sends the request to the new one.
      if (err instanceof MovedDocument) throw err;
      const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) req.log.error({ err }, "reader feedback request failed");
      const message = status === 413 ? "What was sent is too large." : status === 500 ? "Something went wrong on our side. Please try again later." : "This request could not be understood.";
      reply.code(status).header("cache-control", "no-store");
      if (wantsJson(req)) return reply.send({ message });
      setPageHeaders(reply, { frameable: true, noindex: true });
      return reply.type(HTML).send(errorPage(deps.assets, message).value);
    });

    scope.post<{ Params: DocParams }>("/:username/docs/:name/rating", async (req, reply) => {
      const doc = await deps.findDoc(req.params);
      if (!doc || doc.state !== "A" || doc.name !== req.params.name) return deps.notFound(reply);
      const embed = field(req.body, "embed") === "1";
      const refuse = (status: number, message: string) =>
        answer(req, reply, status, { message }, () => ratedPage(doc, deps.assets, { notice: message, embed }));
      if (isCrossSite(req)) return refuse(403, MESSAGES.crossSite);
      if (!doc.ratingsAllowed) return refuse(409, MESSAGES.ratingsOff);
      const stars = parseStars(field(req.body, "stars"));
      if (stars === undefined) return refuse(400, MESSAGES.noStars);
      if (!allowed(ratingLimit, req)) return refuse(429, MESSAGES.tooManyRatings);
      const now = Date.now();
      const readerKey = await deps.store.dailySalts.readerKey({ address: req.ip, userAgent: req.headers["user-agent"] ?? "", documentId: doc.documentId, now });
      const outcome = await deps.store.ratings.rate({ documentId: doc.documentId, day: utcDay(now), readerKey, stars, now });
      if (!outcome.ok) return outcome.reason === "ratings-off" ? refuse(409, MESSAGES.ratingsOff) : deps.notFound(reply);
      const rated = { ...doc, ratingCounts: outcome.counts };
      const { rating, ratingDist } = ratingSummary(outcome.counts);
      const message = `Thank you: you rated this document ${stars} of 5.`;
      return answer(req, reply, 200, { message, rating, ratingDist, summary: ratingText(rated) }, () => ratedPage(rated, deps.assets, { stars, embed }));
    });

    scope.post<{ Params: DocParams }>("/:username/docs/:name/comments", async (req, reply) => {
      const doc = await deps.findDoc(req.params);
      if (!doc || doc.state !== "A" || doc.name !== req.params.name) return deps.notFound(reply);
      const author = field(req.body, "author");
      const text = field(req.body, "text");
      const refuse = (status: number, message: string, field?: string) =>
        answer(req, reply, status, { message, ...(field ? { field } : {}) }, () =>
          commentsPage(doc, deps.assets, { form: { author, text, error: message }, showForm: doc.commentsAllowed && field !== undefined, notice: field ? undefined : message }));
      if (isCrossSite(req)) return refuse(403, MESSAGES.crossSite);
      if (!doc.commentsAllowed) return refuse(409, MESSAGES.commentsOff);
      if (!allowed(commentLimit, req)) return refuse(429, MESSAGES.tooManyComments);
      const done = (published: boolean) => {
        const message = published ? MESSAGES.published : MESSAGES.pending;
        return answer(req, reply, 200, { message }, () => commentsPage(doc, deps.assets, { notice: message, showForm: false }));
      };
      // A bot that filled the field people never see is answered as if its comment were taken.
      if ((field(req.body, "website") ?? "") !== "") return done(await deps.store.accounts.publishesCommentsAtOnce(doc.accountId));
      const input = checkCommentInput(author, text);
      if (!input.ok) return refuse(400, COMMENT_PROBLEM_TEXT[input.problem], FIELD_OF[input.problem]);
      const outcome = await deps.store.comments.add({ documentId: doc.documentId, author: input.author, body: input.body, now: Date.now() });
      if (!outcome.ok) return outcome.reason === "comments-off" ? refuse(409, MESSAGES.commentsOff) : deps.notFound(reply);
      return done(outcome.comment.state === "approved");
    });

    scope.get<{ Params: DocParams; Querystring: Query }>("/:username/docs/:name/comments", async (req, reply) => {
      const doc = await deps.findDoc(req.params);
      if (!doc || doc.state !== "A" || doc.name !== req.params.name || !doc.commentsAllowed) return deps.notFound(reply);
      const raw = req.query.page;
      const page = raw !== undefined && /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : 1;
      const list = await deps.store.comments.approvedPage(doc.documentId, (page - 1) * COMMENTS_PAGE_SIZE, COMMENTS_PAGE_SIZE);
      setPageHeaders(reply, { frameable: false, noindex: true });
      reply.header("cache-control", "no-cache");
      return reply.type(HTML).send(commentsPage(doc, deps.assets, { list: { ...list, page }, showForm: true }).value);
    });
  });
}
