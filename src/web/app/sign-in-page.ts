import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from "fastify";
import { MAX_PASSWORD_LENGTH, verifyPassword } from "../../domain/passwords.ts";
import { html } from "../html.ts";
import { field, type AppContext } from "./app-context.ts";
import { errorBox } from "./app-errors.ts";
import { APP_BASE, csrfField, sendAppPage } from "./app-layout.ts";
import { SignInLimit } from "./sign-in-limit.ts";

export const SESSION_COOKIE = "quire_session";
export const CSRF_COOKIE = "quire_csrf";

/** One message for a wrong username and a wrong password alike: nobody learns which accounts exist. */
const WRONG = "The username or password is not right.";
/** scrypt takes 128 MiB a hash: a burst of sign-ins waits its turn rather than taking the memory at once. */
const MAX_HASHES_AT_ONCE = 2;

/** Runs at most `slots` tasks at once; the others wait in order. */
class HashGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly slots: number) {}
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.slots) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

const LIMITED = "Too many sign-in attempts. Wait a few minutes, then try again.";

/** Where to go after signing in: only a page of the app itself (never another site: an open redirect). */
export function safeNext(next: string | undefined): string {
  const target = next ?? "";
  const path = target.split("?")[0]!;
  return /^\/app(\/[A-Za-z0-9._~\-/%?=&]*)?$/.test(target) && !path.includes("//") && !/\/\.\.?(\/|$)/.test(path) && !/%2e|%2f|%5c/i.test(path) && !target.startsWith(`${APP_BASE}/sign-`)
    ? target
    : `${APP_BASE}/documents`;
}

function signInForm(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, opts: { username?: string; error?: string; next: string }, status = 200) {
  return sendAppPage(ctx, req, reply, { title: "Sign in" }, (csrf) => html`<section class="sign-in">
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

/** Sign-in and sign-out: the routes of the app open to everyone. */
export function registerSignIn(scope: FastifyInstance, ctx: AppContext, limits: { signInAttemptsPerAccount: number; signInAttemptsPerAddress: number }): void {
  const hashing = new HashGate(MAX_HASHES_AT_ONCE);
  const limit = new SignInLimit({ perAccount: limits.signInAttemptsPerAccount, perAddress: limits.signInAttemptsPerAddress });

  scope.get("/sign-in", async (req, reply) => {
    if (req.session.accountId !== undefined) return reply.redirect(safeNext(field(req.query, "next")), 303);
    return signInForm(ctx, req, reply, { next: safeNext(field(req.query, "next")) });
  });

  scope.post("/sign-in", async (req, reply) => {
    const username = (field(req.body, "username") ?? "").trim().toLowerCase().slice(0, 100);
    const password = field(req.body, "password") ?? "";
    const next = safeNext(field(req.body, "next"));
    if (!limit.attempt(username, req.ip)) return signInForm(ctx, req, reply, { username, error: LIMITED, next }, 429);
    // Hashed whether or not the account exists (verifyPassword then checks a decoy): same work, same time.
    const account = username === "" ? undefined : await ctx.store.accounts.signInRecord(username);
    const ok = await hashing.run(() => verifyPassword(password, account?.passwordHash, ctx.config.passwordHashCost));
    if (!ok || !account) return signInForm(ctx, req, reply, { username, error: WRONG, next }, 401);
    // A new session id from this moment on (session fixation), and a new CSRF secret with it.
    await req.session.regenerate();
    req.session.accountId = account.id;
    reply.clearCookie(CSRF_COOKIE, { path: APP_BASE });
    return reply.redirect(next, 303);
  });

  scope.post("/sign-out", async (req, reply) => {
    // The stored session goes: its cookie, even if kept by someone, opens nothing any more.
    if (req.session.sessionId) await req.session.destroy();
    reply.clearCookie(SESSION_COOKIE, { path: APP_BASE }).clearCookie(CSRF_COOKIE, { path: APP_BASE });
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
