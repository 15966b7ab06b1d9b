import type { FastifyRequest } from "fastify";
import type { Registry } from "prom-client";
import type { BlobStore } from "../../blobs/blob-store.ts";
import type { Config } from "../../config.ts";
import type { Store } from "../../store/open-store.ts";
import type { WebAssets } from "../web-assets.ts";

/** What every page of the app may use: the same store and blobs as the API (one implementation of every rule). */
export interface AppContext {
  config: Readonly<Config>;
  store: Store;
  blobs: BlobStore;
  /** Where uploads are spooled, as for the API's upload endpoint (the upload page). */
  spool: { tempPath(): Promise<string> };
  assets: WebAssets;
  /** The process's metrics, when it has them (sign-in outcomes are counted there). */
  registry?: Registry;
}

/** The account a signed-in request acts for. */
export interface SignedInAccount {
  id: number;
  username: string;
}

declare module "fastify" {
  interface Session {
    /** Set at sign-in (and only there): the session id is new from that moment (session fixation). */
    accountId?: number;
    /** The CSRF token's secret (@fastify/csrf-protection in session mode), made with the session's first form. */
    _csrf?: string;
    /**
     * What the keys page shows once after its POST redirected (post/redirect/get): the new key's
     * apiKey (its secret is opened from the store for that one answer, never copied here), or a new
     * v2 token, which is stored only hashed and so rides here for the one redirect; cleared when shown.
     */
    shownOnce?: { apiKey: string } | { token: string };
    /** The webhook page shows the webhook's (new) secret on the page its POST redirects to, once; the secret stays in the store. */
    webhookSecretOnce?: boolean;
  }
  interface FastifyRequest {
    /** Set by the session guard on every signed-in route; undefined elsewhere. */
    appAccount?: SignedInAccount;
  }
}

/**
 * The signed-in account of a request on a signed-in route. Every query a page makes names this
 * account, so one account never reads or changes another's documents or keys.
 */
export function accountOf(req: FastifyRequest): SignedInAccount {
  const account = req.appAccount;
  // Only reached by a route registered outside the signed-in scope by mistake.
  if (!account) throw new Error("accountOf on a route without the session guard");
  return account;
}

/** The first value of a form or query field (repeated names take the first; anything but text is absent). */
export function field(source: unknown, name: string): string | undefined {
  if (source === null || typeof source !== "object" || !Object.hasOwn(source, name)) return undefined;
  const v = (source as Record<string, unknown>)[name];
  if (typeof v === "string") return v;
  return Array.isArray(v) && typeof v[0] === "string" ? v[0] : undefined;
}
