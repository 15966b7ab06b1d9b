import { QuireError, invalid, missing } from "../domain/errors.ts";
import { computeSignature, signatureMatches } from "../domain/signature.ts";
import type { AccountsRepo } from "../store/accounts.ts";
import type { RequestParams } from "./params.ts";

export interface Caller {
  accountId: number;
  username: string;
  /** The action without its prefix: `document.upload`. */
  action: string;
  /** The account's `documentsVersion` as read with the key: what a cached answer must match. */
  documentsVersion: number;
}

export type EndpointKind = "normal" | "upload";

/** What the upload endpoint serves: uploads, and an update that brings a new file (docs/api.md). */
export const UPLOAD_ENDPOINT_ACTIONS: ReadonlySet<string> = new Set(["document.upload", "document.update"]);

export interface AuthOptions {
  accounts: AccountsRepo;
  prefixes: readonly string[];
  knownActions: ReadonlySet<string>;
  /**
   * Answers whether the key may make one more request now (decisions §9, 012), counting
   * correctly signed requests and the rest in buckets of their own (decisions §2 step 3).
   */
  allowRequest?: (apiKey: string, signed: boolean) => boolean;
}

const API_KEY_RE = /^[a-z0-9]{32}$/;

/** The action name without one of the accepted prefixes, or undefined when it is not one we serve. */
export function resolveAction(raw: string, prefixes: readonly string[], known: ReadonlySet<string>): string | undefined {
  const dot = raw.indexOf(".");
  if (dot <= 0 || !prefixes.includes(raw.slice(0, dot))) return undefined;
  const name = raw.slice(dot + 1);
  return known.has(name) ? name : undefined;
}

/** Step 2 of decisions §2: the account a well-formed key belongs to, or undefined (010). */
async function keyOwner(apiKey: string, accounts: AccountsRepo) {
  return API_KEY_RE.test(apiKey) ? accounts.getKeyOwnerForSigning(apiKey) : undefined;
}

/** Whether step 2 of decisions §2 would pass this key: well formed, and some account's. */
export async function isKnownApiKey(apiKey: string, accounts: AccountsRepo): Promise<boolean> {
  return (await keyOwner(apiKey, accounts)) !== undefined;
}

/** Steps 2 to 5 of decisions §2, in that order; the first failure is thrown. */
export async function authenticate(params: RequestParams, endpoint: EndpointKind, opts: AuthOptions): Promise<Caller> {
  const apiKey = params.get("apiKey");
  if (apiKey === undefined) throw new QuireError("009");
  const owner = await keyOwner(apiKey, opts.accounts);
  if (!owner) throw new QuireError("010");
  // Judged before the rate step so that someone who knows only the key fills a bucket of its
  // own, not its owner's; a wrong signature is still answered at step 5.
  const signature = params.get("signature");
  const signed = signature !== undefined && signatureMatches(computeSignature(owner.apiSecret, params.entries()), signature);
  if (opts.allowRequest && !opts.allowRequest(apiKey, signed)) throw new QuireError("012");

  if (signature === undefined) throw missing("signature");
  const rawAction = params.get("action");
  if (rawAction === undefined) throw missing("action");
  const action = resolveAction(rawAction, opts.prefixes, opts.knownActions);
  if (action === undefined || (endpoint === "upload" && !UPLOAD_ENDPOINT_ACTIONS.has(action))) throw invalid("action");

  if (!signed) throw new QuireError("011");
  return { accountId: owner.accountId, username: owner.username, action, documentsVersion: owner.documentsVersion };
}
