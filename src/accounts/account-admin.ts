/**
 * What an operator or an account holder does to accounts: create one, add a key, set the app's
 * password, make and revoke v2 tokens. `quire accounts` (src/cli/), `quire serve --demo`, the web
 * app's keys page, the tests and the benchmarks all call these, so a rule on a new account (its
 * name, its first key) lives once.
 */
import { newApiToken } from "../domain/accounts.ts";
import { bearerTokenHash, bearerTokenPrefix, newBearerToken, TOKEN_PREFIX_LENGTH } from "../domain/bearer-tokens.ts";
import { hashPassword, passwordProblem } from "../domain/passwords.ts";
import { isReservedUsername } from "../domain/reserved-usernames.ts";
import { isValidUsername } from "../domain/values.ts";
import type { Store } from "../store/open-store.ts";

export interface NewCredentials {
  username: string;
  apiKey: string;
  apiSecret: string;
}

/** A refusal to show as it is (the command prints its message); anything else is a fault. */
export class AccountRefusal extends Error {}

export async function createAccount(store: Store, username: string): Promise<NewCredentials> {
  if (!isValidUsername(username)) throw new AccountRefusal(`username must be 3-30 characters of a-z, 0-9, _ . - (got ${JSON.stringify(username)})`);
  // `/<username>` is the account's public page: a name the server uses for itself would shadow it.
  if (isReservedUsername(username)) throw new AccountRefusal(`username ${username} is reserved for the server's own addresses`);
  const apiKey = newApiToken();
  const apiSecret = newApiToken();
  const created = await store.accounts.createWithKey(username, apiKey, apiSecret, Date.now());
  if (!created.ok) throw new AccountRefusal(`username ${username} is taken`);
  return { username, apiKey, apiSecret };
}

export async function addKey(store: Store, username: string): Promise<NewCredentials> {
  const apiKey = newApiToken();
  const apiSecret = newApiToken();
  const added = await store.accounts.addKey(username, apiKey, apiSecret, Date.now());
  if (!added.ok) throw new AccountRefusal(`no account ${username}`);
  return { username, apiKey, apiSecret };
}

/** A new key for a signed-in account (the app's keys page): the secret is answered once, never kept readable. */
export async function addKeyTo(store: Store, accountId: number, label = ""): Promise<Omit<NewCredentials, "username">> {
  const apiKey = newApiToken();
  const apiSecret = newApiToken();
  await store.accounts.addKeyTo(accountId, apiKey, apiSecret, Date.now(), label);
  return { apiKey, apiSecret };
}

/** Sets the web app's password (decisions §13) and ends the account's app sessions: a new password signs everyone out. */
export async function setPassword(store: Store, username: string, password: string, cost?: number): Promise<void> {
  const problem = passwordProblem(password);
  if (problem !== undefined) throw new AccountRefusal(problem);
  const account = await store.accounts.signInRecord(username);
  if (!account) throw new AccountRefusal(`no account ${username}`);
  await store.accounts.setPasswordHash(username, await hashPassword(password, cost));
  await store.appSessions.destroyAllOf(account.id);
}

/** A v2 bearer token for the account (decisions §14): answered once, only its hash is kept. */
export async function createToken(store: Store, username: string): Promise<string> {
  const token = newBearerToken();
  if (!(await store.apiTokens.create(username, bearerTokenHash(token), bearerTokenPrefix(token), Date.now()))) throw new AccountRefusal(`no account ${username}`);
  return token;
}

/** Revokes a v2 token given whole, or by the prefix `accounts list` shows when exactly one token has it. */
export async function revokeToken(store: Store, tokenOrPrefix: string): Promise<string> {
  if (tokenOrPrefix.length > TOKEN_PREFIX_LENGTH) {
    if (await store.apiTokens.revokeHash(bearerTokenHash(tokenOrPrefix))) return `revoked ${bearerTokenPrefix(tokenOrPrefix)}`;
    throw new AccountRefusal("no such token");
  }
  const n = await store.apiTokens.revokePrefix(tokenOrPrefix);
  if (n === 1) return `revoked ${tokenOrPrefix}`;
  throw new AccountRefusal(n === 0 ? `no token ${tokenOrPrefix}` : `${n} tokens start with ${tokenOrPrefix}: give the whole token`);
}
