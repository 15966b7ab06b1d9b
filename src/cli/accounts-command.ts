import { newApiToken } from "../domain/accounts.ts";
import { isValidUsername } from "../domain/values.ts";
import type { Store } from "../store/open-store.ts";
import { isReservedPath } from "../web/reserved-paths.ts";

export interface NewCredentials {
  username: string;
  apiKey: string;
  apiSecret: string;
}

export async function createAccount(store: Store, username: string): Promise<NewCredentials> {
  if (!isValidUsername(username)) throw new Error(`username must be 3-30 characters of a-z, 0-9, _ . - (got ${JSON.stringify(username)})`);
  // `/<username>` is the account's public page: a name the server uses for itself would shadow it.
  if (isReservedPath(username)) throw new Error(`username ${username} is reserved for the server's own addresses`);
  const apiKey = newApiToken();
  const apiSecret = newApiToken();
  const id = await store.accounts.createWithKey(username, apiKey, apiSecret, Date.now());
  if (id === undefined) throw new Error(`username ${username} is taken`);
  return { username, apiKey, apiSecret };
}

export async function addKey(store: Store, username: string): Promise<NewCredentials> {
  const apiKey = newApiToken();
  const apiSecret = newApiToken();
  if (!(await store.accounts.addKey(username, apiKey, apiSecret, Date.now()))) throw new Error(`no account ${username}`);
  return { username, apiKey, apiSecret };
}

export function printCredentials(c: NewCredentials, out: NodeJS.WritableStream = process.stdout): void {
  out.write(`username:  ${c.username}\napiKey:    ${c.apiKey}\napiSecret: ${c.apiSecret}\n`);
}

export async function accountsCommand(store: Store, args: string[]): Promise<number> {
  const [sub, arg] = args;
  switch (sub) {
    case "create":
      if (!arg) break;
      printCredentials(await createAccount(store, arg));
      return 0;
    case "add-key":
      if (!arg) break;
      printCredentials(await addKey(store, arg));
      return 0;
    case "list":
      for (const a of await store.accounts.list()) {
        process.stdout.write(`${a.username}\t${new Date(a.createdAt).toISOString()}\t${a.activeKeys.join(",") || "(no active key)"}\n`);
      }
      return 0;
    case "revoke-key":
      if (!arg) break;
      if (!(await store.accounts.revokeKey(arg, Date.now()))) {
        process.stderr.write(`no active key ${arg}\n`);
        return 1;
      }
      process.stdout.write(`revoked ${arg}\n`);
      return 0;
    case "reseal": {
      const c = await store.accounts.resealSecrets();
      process.stdout.write(`resealed ${c.resealed} apiSecret(s) with the first QUIRE_SECRET_KEY; ${c.current} already were\n`);
      if (c.unreadableRevoked > 0) {
        process.stdout.write(`${c.unreadableRevoked} revoked key(s) are sealed with a key QUIRE_SECRET_KEY does not hold; they sign nothing and were left as they are\n`);
      }
      if (c.unreadable > 0) {
        process.stderr.write(`${c.unreadable} active key(s) are sealed with a key QUIRE_SECRET_KEY does not hold (or damaged); they were left as they are\n`);
      }
      if (c.changedMeanwhile > 0) {
        process.stderr.write(`${c.changedMeanwhile} row(s) changed while this ran; run it again once every process has the new key first\n`);
      }
      return c.unreadable + c.changedMeanwhile === 0 ? 0 : 1;
    }
  }
  process.stderr.write("usage: quire accounts create <username> | add-key <username> | list | revoke-key <apiKey> | reseal\n");
  return 2;
}
