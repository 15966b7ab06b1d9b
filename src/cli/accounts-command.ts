import { addKey, createAccount, createToken, revokeToken, setPassword, type NewCredentials } from "../accounts/account-admin.ts";
import { passwordProblem } from "../domain/passwords.ts";
import type { Store } from "../store/open-store.ts";

/**
 * @deprecated Import from src/accounts/account-admin.ts. Kept for this merge only: branches made
 * before the move import these from here; remove once they are merged.
 */

/**
 * The password, from the terminal without echo, or the first line of standard input when it is
 * piped (scripts, tests). Never from the command line, where `ps` and the shell history would show it.
 */
export async function readPassword(input: NodeJS.ReadStream = process.stdin, out: NodeJS.WritableStream = process.stderr): Promise<string> {
  if (!input.isTTY) {
    let text = "";
    for await (const chunk of input) {
      text += String(chunk);
      if (text.includes("\n")) break;
    }
    return text.split(/\r?\n/)[0] ?? "";
  }
  out.write("password: ");
  input.setRawMode(true);
  input.resume();
  let password = "";
  try {
    for await (const chunk of input) {
      for (const ch of String(chunk)) {
        if (ch === "\r" || ch === "\n") return password;
        if (ch === "\u0003") throw new Error("interrupted");
        if (ch === "\u007f") password = password.slice(0, -1);
        else password += ch;
      }
    }
    return password;
  } finally {
    input.setRawMode(false);
    input.pause();
    out.write("\n");
  }
}

export function printCredentials(c: NewCredentials, out: NodeJS.WritableStream = process.stdout): void {
  out.write(`username:  ${c.username}\napiKey:    ${c.apiKey}\napiSecret: ${c.apiSecret}\n`);
}

export async function accountsCommand(store: Store, args: string[], opts: { passwordHashCost?: number } = {}): Promise<number> {
  const [sub, arg] = args;
  switch (sub) {
    case "create": {
      if (!arg) break;
      const withPassword = args.slice(2).includes("--password");
      // Read before creating: a refused password leaves no account behind.
      const password = withPassword ? await readPassword() : undefined;
      const problem = password === undefined ? undefined : passwordProblem(password);
      if (problem !== undefined) throw new Error(problem);
      printCredentials(await createAccount(store, arg));
      if (password !== undefined) await setPassword(store, arg, password, opts.passwordHashCost);
      return 0;
    }
    case "set-password":
      if (!arg) break;
      await setPassword(store, arg, await readPassword(), opts.passwordHashCost);
      process.stdout.write(`password set for ${arg}; its web app sessions were ended\n`);
      return 0;
    case "add-key":
      if (!arg) break;
      printCredentials(await addKey(store, arg));
      return 0;
    case "list":
      for (const a of await store.accounts.list()) {
        process.stdout.write(`${a.username}\t${new Date(a.createdAt).toISOString()}\t${a.activeKeys.join(",") || "(no active key)"}\n`);
      }
      for (const t of await store.apiTokens.list()) {
        const used = t.lastUsedAt === null ? "never used" : `last used ${new Date(t.lastUsedAt).toISOString()}`;
        process.stdout.write(`token ${t.prefix}…\t${t.username}\tcreated ${new Date(t.createdAt).toISOString()}\t${used}\n`);
      }
      return 0;
    case "create-token":
      if (!arg) break;
      process.stdout.write(`token: ${await createToken(store, arg)}\n`);
      return 0;
    case "revoke-token":
      if (!arg) break;
      try {
        process.stdout.write(`${await revokeToken(store, arg)}\n`);
      } catch (err) {
        process.stderr.write(`${(err as Error).message}\n`);
        return 1;
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
      const w = await store.webhooks.resealSecrets();
      process.stdout.write(`resealed ${w.resealed} webhook secret(s); ${w.current} already were\n`);
      if (w.unreadable + w.changedMeanwhile > 0) {
        process.stderr.write(`${w.unreadable} webhook secret(s) could not be opened and ${w.changedMeanwhile} changed meanwhile; they were left as they are\n`);
      }
      return c.unreadable + c.changedMeanwhile + w.unreadable + w.changedMeanwhile === 0 ? 0 : 1;
    }
  }
  process.stderr.write("usage: quire accounts create <username> [--password] | set-password <username> | add-key <username> | list | revoke-key <apiKey> | create-token <username> | revoke-token <token-or-prefix> | reseal\n");
  return 2;
}
