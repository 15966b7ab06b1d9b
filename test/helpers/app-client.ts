import assert from "node:assert/strict";
import { request } from "node:http";
import type { Page } from "playwright-core";
import { createAccount, setPassword } from "../../src/accounts/account-admin.ts";
import type { TestServer } from "./test-server.ts";

/** Cheap hashes in tests: the cost is a setting, and the app's decoy uses the same one. */
export const TEST_APP_ENV = { QUIRE_PASSWORD_HASH_COST: "12" } as const;
export const TEST_PASSWORD = "correct horse battery";
export const APP_PASSWORD = TEST_PASSWORD;
export const TEST_HASH_COST = Number(TEST_APP_ENV.QUIRE_PASSWORD_HASH_COST);

export async function givePassword(server: TestServer, username: string, password = TEST_PASSWORD): Promise<void> {
  await setPassword(server.services.store, username, password, TEST_HASH_COST);
}

/** Gives an account (made when missing) the test password; answers its id. */
export async function appAccount(server: TestServer, username: string): Promise<number> {
  const store = server.services.store;
  if (!(await store.accounts.signInRecord(username))) await createAccount(store, username);
  await givePassword(server, username);
  return (await store.accounts.signInRecord(username))!.id;
}

/** The CSRF token a page of the app carries. */
const tokenIn = (page: string) => /<meta name="csrf-token" content="([^"]+)">/.exec(page)?.[1];

export interface AppAnswer {
  status: number;
  body: string;
  location: string | null;
  setCookies: string[];
  headers: Headers;
}

/**
 * A browser without a browser: keeps the app's cookies and the CSRF token of the last page it read,
 * for the HTTP-level tests of the app (CSRF, sessions, limits, isolation, escaping).
 */
export class AppClient {
  readonly cookies = new Map<string, string>();
  csrf = "";

  /** `localAddress`: the client's own address (127.0.0.2, 127.0.0.3…: distinct client addresses on one machine). */
  constructor(readonly origin: string, readonly localAddress?: string) {}

  private send(url: string, init: { method?: string; headers: Record<string, string>; body?: string }): Promise<Response> {
    if (this.localAddress === undefined) return fetch(url, { ...init, redirect: "manual" });
    return fetchFrom(this.localAddress, url, init);
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  /** Keeps the cookies an answer sets (and forgets those it clears). */
  remember(res: Response): AppAnswer["setCookies"] {
    const set = res.headers.getSetCookie();
    for (const c of set) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /max-age=0|expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return set;
  }

  private async answer(res: Response): Promise<AppAnswer> {
    const setCookies = this.remember(res);
    const body = await res.text();
    this.csrf = tokenIn(body) ?? this.csrf;
    return { status: res.status, body, location: res.headers.get("location"), setCookies, headers: res.headers };
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<AppAnswer> {
    return this.answer(await this.send(this.origin + path, { headers: { cookie: this.cookieHeader(), ...headers } }));
  }

  /** A form POST; the page's CSRF token is added unless `_csrf` is given (null: none at all). */
  async post(path: string, form: Record<string, string | null> = {}, headers: Record<string, string> = {}): Promise<AppAnswer> {
    const body = new URLSearchParams();
    if (!("_csrf" in form)) body.set("_csrf", this.csrf);
    for (const [k, v] of Object.entries(form)) if (v !== null) body.set(k, v);
    return this.answer(
      await this.send(this.origin + path, {
        method: "POST",
        headers: { cookie: this.cookieHeader(), "content-type": "application/x-www-form-urlencoded", ...headers },
        body: body.toString(),
      }),
    );
  }

  /** Reads the sign-in page (for its token), then signs in; answers the POST's answer. */
  async signIn(username: string, password = TEST_PASSWORD, headers: Record<string, string> = {}): Promise<AppAnswer> {
    await this.get("/app/sign-in");
    return this.post("/app/sign-in", { username, password }, headers);
  }
}

/** A request sent from a chosen local address, answered as a fetch Response (redirects not followed). */
export function fetchFrom(localAddress: string, url: string, init: { method?: string; headers: Record<string, string>; body?: string }): Promise<Response> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method ?? "GET", headers: init.headers, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const headers = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const status = res.statusCode ?? 0;
        resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers }));
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/** A signed-in session of the app over plain HTTP: its cookies, and the CSRF token of its pages. */
export interface AppSession {
  cookie: string;
  csrf: string;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** A form post carrying the token in its body (as the pages' forms do). */
  post(path: string, fields: Record<string, string | string[]>, headers?: Record<string, string>): Promise<Response>;
  /** A refreshed token (from a page of the app). */
  refreshCsrf(): Promise<string>;
}

/** Signs in through the sign-in form, as a browser would. */
export async function signInHttp(baseUrl: string, username: string, password = APP_PASSWORD): Promise<AppSession> {
  const jar = new AppClient(baseUrl);
  const cookie = () => jar.cookieHeader();
  const tokenOf = (page: string) => tokenIn(page) ?? assert.fail("no csrf token on the page");
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(baseUrl + path, { headers: { cookie: cookie(), ...headers }, redirect: "manual" });
    jar.remember(res);
    return res;
  };
  const post = async (path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    const res = await fetch(baseUrl + path, {
      method: "POST",
      headers: { cookie: cookie(), "content-type": "application/x-www-form-urlencoded", ...headers },
      body: body.toString(),
      redirect: "manual",
    });
    jar.remember(res);
    return res;
  };
  const signInPage = await get("/app/sign-in");
  const signedIn = await post("/app/sign-in", { _csrf: tokenOf(await signInPage.text()), username, password });
  assert.equal(signedIn.status, 303, `signed in as ${username}`);
  const session: AppSession = {
    get cookie() {
      return cookie();
    },
    csrf: "",
    get,
    post,
    async refreshCsrf() {
      session.csrf = tokenOf(await (await get("/app/upload")).text());
      return session.csrf;
    },
  };
  await session.refreshCsrf();
  return session;
}

/** Signs a browser page in through the sign-in form. */
export async function signInBrowser(page: Page, baseUrl: string, username: string, password = APP_PASSWORD): Promise<void> {
  await page.goto(`${baseUrl}/app/sign-in`);
  await page.fill("#username", username);
  await page.fill("#password", password);
  await Promise.all([page.waitForURL(/\/app\/(?!sign-in)/), page.click('button[type="submit"].primary')]);
}
