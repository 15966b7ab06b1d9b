import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from "fastify";
import { Counter } from "prom-client";
import { hashPassword, MAX_PASSWORD_LENGTH, needsRehash, prepareDecoy, verifyPassword } from "../../domain/passwords.ts";
import { html } from "../html.ts";
import { field, type AppContext } from "./app-context.ts";
import { errorBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";
import { addressGroup } from "../../ops/client-address.ts";
import { LeakyBuckets } from "../../ops/leaky-buckets.ts";
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE_S, DeviceCookies } from "./device-cookie.ts";
import { SESSION_LIFETIME_MS } from "./session-store.ts";
import { BUSY, HashGate } from "./hash-gate.ts";
import { SignInLimit, type SignInClient, type SignInVerdict } from "./sign-in-limit.ts";

export const SESSION_COOKIE = "quire_session";
/** The CSRF cookie of earlier versions (the token's secret now lives in the session): cleared at sign-in and sign-out. */
export const LEGACY_CSRF_COOKIE = "quire_csrf";
/**
 * A visitor who opens the sign-in form gets a short stored session (no account) holding the form's
 * CSRF secret: the token is bound to it as every other token is bound to its session.
 */
export const PRE_SESSION_LIFETIME_MS = 2 * 3600_000;
/** New pre-sessions one address (an IPv6 /64) may open in 15 minutes, as a multiple of its sign-in attempts. */
const PRE_SESSIONS_PER_ATTEMPT = 2;

/** One message for a wrong username and a wrong password alike: nobody learns which accounts exist. */
const WRONG = "The username or password is not right.";
/** scrypt takes 16 MiB a hash (128 with the settings of earlier versions): a burst of sign-ins waits its turn rather than taking the memory at once. */
const MAX_HASHES_AT_ONCE = 2;
/** Attempts from clients an account does not know that may wait for a hash; past it they are refused at once. */
const MAX_UNKNOWN_WAITING = 32;

/** Why an attempt was refused before its password was even looked at, in words. */
const REFUSED: Record<Exclude<SignInVerdict, "ok">, string> = {
  address: "Too many sign-in attempts from your network. Wait a few minutes, then try again.",
  "username-here": "Too many sign-in attempts for this username from your network. Wait a few minutes, then try again.",
  "username-guarded":
    "Many sign-ins with this username have failed from other places, so for now it can be used only from a browser or network that has signed in with it before. Try from one of those, or wait an hour.",
};
const BUSY_TEXT = "Many sign-ins are being checked at the moment. Wait a minute, then try again.";

/** Where to go after signing in: only a page of the app itself (never another site: an open redirect). */
export function safeNext(next: string | undefined): string {
  const target = next ?? "";
  const path = target.split("?")[0]!;
  return /^\/app(\/[A-Za-z0-9._~\-/%?=&]*)?$/.test(target) && !path.includes("//") && !/\/\.\.?(\/|$)/.test(path) && !/%2e|%2f|%5c/i.test(path) && !target.startsWith(`${APP_BASE}/sign-`)
    ? target
    : `${APP_BASE}/documents`;
}

/**
 * The sign-in form. A visitor without a session gets a pre-session (a stored row for a few hours):
 * one address may open only so many, so a client that keeps no cookies cannot fill the table.
 */
function signInForm(
  ctx: AppContext, req: FastifyRequest, reply: FastifyReply, preSessions: LeakyBuckets,
  opts: { username?: string; error?: string; next: string }, status = 200,
) {
  let preSession = true;
  if (req.session.accountId === undefined && req.session._csrf === undefined) {
    // A new pre-session lives hours, not the week of a signed-in one.
    if (preSessions.take(addressGroup(req.ip), Date.now())) req.session.options({ maxAge: PRE_SESSION_LIFETIME_MS });
    else [preSession, opts, status] = [false, { ...opts, error: REFUSED.address }, 429];
  }
  return sendAppPage(ctx, req, reply, { title: "Sign in", preSession }, (csrf) => html`<section class="sign-in">
<h1>Sign in</h1>
${errorBox(opts.error)}
<form method="post" action="${APP_BASE}/sign-in" class="stack">
${csrfField(csrf)}
<input type="hidden" name="next" value="${opts.next}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="30" value="${opts.username ?? ""}"${opts.username ? "" : html` autofocus`}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${MAX_PASSWORD_LENGTH}"${opts.username ? html` autofocus` : ""}>
<button type="submit" class="primary">Sign in</button>
</form>
<p class="hint">No password yet? The server's operator sets one with <code>quire accounts set-password</code>.</p>
</section>`, status);
}

export interface SignInSettings {
  signInAttemptsPerAccount: number;
  signInAttemptsPerAddress: number;
  signInFailuresPerAccount: number;
  /** The server's session-signing secret (device cookies are signed with a key derived from it). */
  secret: string;
}

/** Sign-in and sign-out: the routes of the app open to everyone. */
export function registerSignIn(scope: FastifyInstance, ctx: AppContext, settings: SignInSettings): void {
  const hashing = new HashGate(MAX_HASHES_AT_ONCE, MAX_UNKNOWN_WAITING);
  const limit = new SignInLimit({
    perAccountAddress: settings.signInAttemptsPerAccount,
    perAddress: settings.signInAttemptsPerAddress,
    failuresPerAccount: settings.signInFailuresPerAccount,
  });
  const devices = new DeviceCookies(settings.secret);
  const preSessions = new LeakyBuckets(settings.signInAttemptsPerAddress * PRE_SESSIONS_PER_ATTEMPT, 15 * 60_000);
  // What operators see of an attack: attempts by outcome, and the password hashes actually computed.
  const registers = ctx.registry ? [ctx.registry] : [];
  const outcomes = new Counter({
    name: "quire_app_sign_ins_total",
    help: "Web app sign-in attempts by outcome: ok, wrong, refused by a bound (address, username_here, username_guarded), busy",
    labelNames: ["outcome"],
    registers,
  });
  const hashes = new Counter({ name: "quire_app_password_hashes_total", help: "Passwords hashed for web app sign-ins (refused attempts hash nothing)", registers });
  // Made now, not at the first unknown username (which then took two hashes' time: a tell, and a wait).
  prepareDecoy(ctx.config.passwordHashCost).catch(() => {});

  scope.get("/sign-in", async (req, reply) => {
    if (req.session.accountId !== undefined) return reply.redirect(safeNext(field(req.query, "next")), 303);
    return signInForm(ctx, req, reply, preSessions, { next: safeNext(field(req.query, "next")) });
  });

  scope.post("/sign-in", async (req, reply) => {
    const username = (field(req.body, "username") ?? "").trim().toLowerCase().slice(0, 100);
    const password = field(req.body, "password") ?? "";
    const next = safeNext(field(req.body, "next"));
    const client: SignInClient = { username, clientAddress: req.ip, device: devices.verify(req.cookies[DEVICE_COOKIE], username) };
    // Every bound is checked here, before the account is looked up or anything is hashed.
    const verdict = limit.attempt(client);
    if (verdict !== "ok") {
      outcomes.inc({ outcome: verdict.replace("-", "_") });
      return signInForm(ctx, req, reply, preSessions, { username, error: REFUSED[verdict], next }, 429);
    }
    const checked = await hashing.run(limit.knows(client), async () => {
      // Hashed whether or not the account exists (verifyPassword then checks a decoy): same work, same time.
      const account = username === "" ? undefined : await ctx.store.accounts.signInRecord(username);
      hashes.inc();
      const ok = await verifyPassword(password, account?.passwordHash, ctx.config.passwordHashCost);
      return ok ? account : undefined;
    });
    if (checked !== BUSY && checked?.passwordHash && needsRehash(checked.passwordHash, ctx.config.passwordHashCost)) {
      // A hash of older settings is made again with today's, after the answer: nobody waits for it.
      const { id, passwordHash: before } = checked;
      void hashing
        .run(true, async () => ctx.store.accounts.replacePasswordHash(id, before, await hashPassword(password, ctx.config.passwordHashCost)))
        .catch((err: unknown) => req.log.error({ err }, "rehashing a password with today's settings failed"));
    }
    if (checked === BUSY) {
      outcomes.inc({ outcome: "busy" });
      return signInForm(ctx, req, reply, preSessions, { username, error: BUSY_TEXT, next }, 503);
    }
    outcomes.inc({ outcome: checked ? "ok" : "wrong" });
    if (!checked) {
      limit.failed(client);
      return signInForm(ctx, req, reply, preSessions, { username, error: WRONG, next }, 401);
    }
    limit.succeeded(client);
    // A new session id from this moment on (session fixation), with a CSRF secret of its own on the
    // next page; the pre-session (and its secret) is deleted.
    await req.session.regenerate();
    req.session.options({ maxAge: SESSION_LIFETIME_MS });
    req.session.accountId = checked.id;
    // This browser is known to the account from now on (sign-in-limit.ts).
    reply.setCookie(DEVICE_COOKIE, devices.issue(username), { path: APP_BASE, httpOnly: true, sameSite: "lax", secure: "auto", maxAge: DEVICE_COOKIE_MAX_AGE_S });
    reply.clearCookie(LEGACY_CSRF_COOKIE, { path: APP_BASE });
    return reply.redirect(next, 303);
  });

  scope.post("/sign-out", async (req, reply) => {
    // The stored session goes: its cookie, even if kept by someone, opens nothing any more.
    if (req.session.sessionId) await req.session.destroy();
    reply.clearCookie(SESSION_COOKIE, { path: APP_BASE }).clearCookie(LEGACY_CSRF_COOKIE, { path: APP_BASE });
    return reply.redirect(`${APP_BASE}/sign-in`, 303);
  });
}

/**
 * The session guard of every signed-in route: the session's account, re-read on each request (an
 * account deleted meanwhile signs its sessions out), on the request for the page (accountOf).
 */
export function guardSession(ctx: AppContext): preHandlerAsyncHookHandler {
  return async function (req, reply) {
    const id = req.session.accountId;
    const account = id === undefined ? undefined : await ctx.store.accounts.byId(id);
    if (account) {
      req.appAccount = account;
      return;
    }
    if (id !== undefined) await req.session.destroy();
    if (req.method === "GET" && !(req.headers.accept ?? "").includes("application/json")) {
      const path = req.url.split("#")[0] ?? "";
      return reply.header("cache-control", "no-store").redirect(`${APP_BASE}/sign-in?next=${encodeURIComponent(path)}`, 303);
    }
    return reply.code(401).header("cache-control", "no-store").send({ error: "You are signed out. Sign in again." });
  };
}
