import fastifyCookie from "@fastify/cookie";
import fastifyCsrf from "@fastify/csrf-protection";
import fastifyFormbody from "@fastify/formbody";
import fastifySession from "@fastify/session";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { QuireError } from "../../domain/errors.ts";
import { html } from "../html.ts";
import { loadWebAssets } from "../web-assets.ts";
import type { AppContext } from "./app-context.ts";
import { describeFailure } from "./app-errors.ts";
import { APP_BASE, sendAppPage } from "./app-layout.ts";
import { SIGNED_IN_PAGES } from "./app-routes.ts";
import { countPendingComments } from "./comments-page.ts";
import { guardSession, registerSignIn, SESSION_COOKIE } from "./sign-in-page.ts";
import { SESSION_LIFETIME_MS, StoredSessions } from "./session-store.ts";

/**
 * Every route of the app that changes something (any method but GET/HEAD), as `METHOD path`:
 * tests check that each one refuses a request without the CSRF token, pages added later included.
 */
export const APP_CHANGE_ROUTES = new Set<string>();

/** A form of the app is a few KB; nothing larger is read. */
const FORM_BODY_LIMIT = 256 * 1024;

/** The first value of each query name, with no prototype (`?__proto__=` is a name like any other). */
function parseQuery(url: string): Record<string, string> {
  const query = Object.create(null) as Record<string, string>;
  const q = url.indexOf("?");
  if (q === -1) return query;
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) if (!Object.hasOwn(query, k)) query[k] = v;
  return query;
}

const wantsJson = (req: FastifyRequest) => (req.headers.accept ?? "").includes("application/json");

/** A change sent from a page of another origin, as the browser says (`Sec-Fetch-Site`): refused like a missing token. */
class CrossSiteRequest extends Error {
  readonly code = "QUIRE_CROSS_SITE";
  readonly statusCode = 403;
}

/**
 * Browsers name where a request comes from; a change is taken only from this origin's own pages.
 * `same-site` (a sibling subdomain, another port) is refused too: those are the places that can
 * plant cookies for this host. A client that does not send the header relies on the token alone.
 */
function crossSite(req: FastifyRequest): boolean {
  const site = req.headers["sec-fetch-site"];
  return site !== undefined && site !== "same-origin";
}

/**
 * The publisher's web app (decisions §13) under /app, as an encapsulated plugin: its cookies,
 * sessions, CSRF check and form parser never touch the API or the public pages.
 */
export async function registerAppRoutes(app: FastifyInstance, deps: Omit<AppContext, "assets">): Promise<void> {
  const ctx: AppContext = { ...deps, assets: loadWebAssets() };
  const httpsOnly = ctx.config.publicUrl?.startsWith("https:") === true;
  const secret = await ctx.store.appSessions.cookieSecret();

  await app.register(
    async (scope) => {
      scope.addHook("onRoute", (route) => {
        for (const method of [route.method].flat()) if (method !== "GET" && method !== "HEAD") APP_CHANGE_ROUTES.add(`${method} ${route.url}`);
      });
      scope.addHook("onRequest", (req, _reply, done) => {
        req.query = parseQuery(req.url);
        // The public address is https: browsers reach this server only through the operator's TLS
        // proxy, so the cookies must be Secure even though the proxy speaks plain http to us.
        if (httpsOnly && req.protocol !== "https") Object.defineProperty(req, "protocol", { value: "https" });
        done();
      });
      await scope.register(fastifyFormbody, { bodyLimit: FORM_BODY_LIMIT });
      await scope.register(fastifyCookie);
      await scope.register(fastifySession, {
        secret,
        cookieName: SESSION_COOKIE,
        store: new StoredSessions(ctx.store.appSessions),
        // Nothing is stored for visitors until they open the sign-in form (a pre-session for its CSRF
        // secret), and a session is written only when it changes.
        saveUninitialized: false,
        rolling: false,
        cookie: { path: APP_BASE, httpOnly: true, sameSite: "lax", secure: "auto", maxAge: SESSION_LIFETIME_MS },
      });
      await scope.register(fastifyCsrf, {
        // The token's secret lives in the server-side session (a pre-session before signing in), so
        // a cookie planted by another subdomain or port cannot supply one (issue 23 item 6).
        sessionPlugin: "@fastify/session",
      });
      // Every change (any method but GET and HEAD), on every page of the app, carries the token of its own session.
      scope.addHook("preHandler", (req, reply, done) => {
        if (req.method === "GET" || req.method === "HEAD") return done();
        if (crossSite(req)) return done(new CrossSiteRequest("cross-site change refused"));
        scope.csrfProtection(req, reply, done);
      });

      scope.setErrorHandler((err: FastifyError, req, reply) => appError(ctx, err, req, reply));
      scope.setNotFoundHandler((req, reply) => {
        if (wantsJson(req)) return reply.code(404).header("cache-control", "no-store").send({ error: "Not found." });
        return sendAppPage(ctx, req, reply, { title: "Not found" }, () => html`<h1>Not found</h1>
<p>There is no page at this address. <a href="${APP_BASE}/documents">Go to your documents</a>.</p>`, 404);
      });

      registerSignIn(scope, ctx, {
        signInAttemptsPerAccount: ctx.config.signInAttemptsPerAccount,
        signInAttemptsPerAddress: ctx.config.signInAttemptsPerAddress,
        signInFailuresPerAccount: ctx.config.signInFailuresPerAccount,
        secret,
      });

      // Everything else is for a signed-in account only.
      await scope.register(async (signedIn) => {
        signedIn.addHook("preHandler", guardSession(ctx));
        signedIn.addHook("preHandler", countPendingComments(ctx));
        signedIn.get("/", async (_req, reply) => reply.redirect(`${APP_BASE}/documents`, 303));
        for (const register of SIGNED_IN_PAGES) await register(signedIn, ctx);
      });
    },
    { prefix: APP_BASE },
  );
}

/** A failure as a page (or JSON for the scripts): the API's errors in words, a CSRF refusal as 403. */
function appError(ctx: AppContext, err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  if ((err as unknown) instanceof QuireError) {
    // A rule of the API refused it (pages mostly show these beside their form; this is the fallback).
    const quire = err as unknown as QuireError;
    const text = describeFailure(quire).text;
    const status = quire.code === "300" ? 404 : quire.code === "500" ? 500 : 400;
    if (wantsJson(req)) return reply.code(status).header("cache-control", "no-store").send({ error: text, field: quire.field });
    return sendAppPage(ctx, req, reply, { title: "Something went wrong" }, () => html`<h1>Something went wrong</h1>
<p class="message error" role="alert">${text}</p>
<p><a href="${APP_BASE}/documents">Back to your documents</a></p>`, status);
  }
  const csrf = err.code === "FST_CSRF_MISSING_SECRET" || err.code === "FST_CSRF_INVALID_TOKEN" || err.code === "QUIRE_CROSS_SITE";
  const tooLarge = err.code === "FST_ERR_CTP_BODY_TOO_LARGE";
  const status = csrf ? 403 : tooLarge ? 413 : err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  if (status === 500) req.log.error({ err }, "web app request failed");
  const text = csrf
    ? "This form came from a page that has expired, or from another site. Reload the page and try again."
    : tooLarge
      ? "What was sent is too large."
      : status === 500
        ? describeFailure(err).text
        : "This request could not be understood.";
  if (wantsJson(req)) return reply.code(status).header("cache-control", "no-store").send({ error: text });
  return sendAppPage(ctx, req, reply, { title: "Something went wrong" }, () => html`<h1>Something went wrong</h1>
<p class="message error" role="alert">${text}</p>
<p><a href="${APP_BASE}/documents">Back to your documents</a></p>`, status);
}
