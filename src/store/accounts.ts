import type { Kysely } from "kysely";
import { SecretBox } from "../domain/secret-box.ts";
import type { Database } from "./schema.ts";

export interface KeyOwner {
  accountId: number;
  username: string;
  apiSecret: string;
  /** Changes whenever one of the account's documents does (see migration 0003). */
  documentsVersion: number;
}

export interface AccountSummary {
  id: number;
  username: string;
  createdAt: number;
  activeKeys: string[];
}

/** `secrets` seals apiSecrets as they are written (when QUIRE_SECRET_KEY is set) and opens them as they are read. */
export function accountsRepo(db: Kysely<Database>, secrets: SecretBox = new SecretBox([])) {
  // Opening costs a cipher set-up per request; the stored value maps to one secret, so it is kept.
  const opened = new Map<string, string>();
  const openSecret = (stored: string, apiKey: string): string => {
    if (!SecretBox.isSealed(stored)) return stored;
    const cacheKey = `${apiKey}\0${stored}`;
    let secret = opened.get(cacheKey);
    if (secret === undefined) {
      secret = secrets.open(stored, apiKey);
      if (opened.size >= 10_000) opened.clear();
      opened.set(cacheKey, secret);
    }
    return secret;
  };
  // Built and compiled once: it runs on every request, and building a query costs more than running it.
  const keyOwnerQuery = db
    .selectFrom("apiKeys")
    .innerJoin("accounts", "accounts.id", "apiKeys.accountId")
    .select(["accounts.id as accountId", "accounts.username", "apiKeys.apiSecret", "accounts.documentsVersion"])
    .where("apiKeys.apiKey", "=", "")
    .where("apiKeys.revokedAt", "is", null)
    .compile();
  if (keyOwnerQuery.parameters.length !== 1) throw new Error("the key owner query must take the key as its only parameter");

  return {
    async count(): Promise<number> {
      const row = await db.selectFrom("accounts").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Creates the account with its first key, in one transaction; undefined if the username is taken. */
    async createWithKey(username: string, apiKey: string, apiSecret: string, now: number): Promise<number | undefined> {
      return db.transaction().execute(async (trx) => {
        const taken = await trx.selectFrom("accounts").select("id").where("username", "=", username).executeTakeFirst();
        if (taken) return undefined;
        const { id } = await trx
          .insertInto("accounts")
          .values({ username, createdAt: now })
          .returning("id")
          .executeTakeFirstOrThrow();
        await trx
          .insertInto("apiKeys")
          .values({ apiKey, accountId: id, apiSecret: secrets.seal(apiSecret, apiKey), createdAt: now, revokedAt: null })
          .execute();
        return id;
      });
    },

    async addKey(username: string, apiKey: string, apiSecret: string, now: number): Promise<boolean> {
      const account = await db.selectFrom("accounts").select("id").where("username", "=", username).executeTakeFirst();
      if (!account) return false;
      await db
        .insertInto("apiKeys")
        .values({ apiKey, accountId: account.id, apiSecret: secrets.seal(apiSecret, apiKey), createdAt: now, revokedAt: null })
        .execute();
      return true;
    },

    /** The only query that reads a secret: the signature check needs it. */
    async getKeyOwnerForSigning(apiKey: string): Promise<KeyOwner | undefined> {
      const { rows } = await db.executeQuery<KeyOwner>({ ...keyOwnerQuery, parameters: [apiKey] });
      const owner = rows[0];
      return owner && { ...owner, apiSecret: openSecret(owner.apiSecret, apiKey) };
    },

    async revokeKey(apiKey: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable("apiKeys")
        .set({ revokedAt: now })
        .where("apiKey", "=", apiKey)
        .where("revokedAt", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async list(): Promise<AccountSummary[]> {
      const accounts = await db.selectFrom("accounts").select(["id", "username", "createdAt"]).orderBy("username").execute();
      const keys = await db
        .selectFrom("apiKeys")
        .select(["accountId", "apiKey"])
        .where("revokedAt", "is", null)
        .orderBy("createdAt")
        .execute();
      return accounts.map((a) => ({ ...a, activeKeys: keys.filter((k) => k.accountId === a.id).map((k) => k.apiKey) }));
    },
  };
}

export type AccountsRepo = ReturnType<typeof accountsRepo>;
