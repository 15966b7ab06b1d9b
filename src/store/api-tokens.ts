import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

export interface TokenOwner {
  accountId: number;
  username: string;
  /** The account's `documentsVersion` as read with the token: what a cached answer must match. */
  documentsVersion: number;
}

export interface TokenSummary {
  prefix: string;
  username: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** Last-used times are written at most this often per token, so a client that polls writes little. */
const TOUCH_EVERY_MS = 60_000;

/** Token hashes whose lookup is remembered at most (the map is emptied past it). */
const REMEMBERED_TOKENS = 10_000;

interface OwnerRow {
  accountId: number;
  username: string;
  lastUsedAt: number | null;
  documentsVersion: number;
}

/**
 * v2 bearer tokens (decisions §14, migration 0015): only hashes are stored and looked up. As v1's
 * key lookups (src/store/accounts.ts), a lookup is remembered while the database has not changed
 * (`changeEpoch`, SQLite's data version: any write, a revocation included, from any process, ends it).
 */
export function apiTokensRepo(db: Kysely<Database>, changeEpoch?: () => Promise<number | undefined>) {
  // Built and compiled once: it runs on every v2 request.
  const ownerQuery = db
    .selectFrom("apiTokens")
    .innerJoin("accounts", "accounts.id", "apiTokens.accountId")
    .select(["apiTokens.accountId", "accounts.username", "apiTokens.lastUsedAt", "accounts.documentsVersion"])
    .where("apiTokens.tokenHash", "=", "")
    .compile();
  if (ownerQuery.parameters.length !== 1) throw new Error("the token owner query must take the hash as its only parameter");
  const remembered = new Map<string, { epoch: number; row: OwnerRow | undefined }>();
  const summaries = () =>
    db
      .selectFrom("apiTokens")
      .innerJoin("accounts", "accounts.id", "apiTokens.accountId")
      .select(["apiTokens.prefix", "accounts.username", "apiTokens.createdAt", "apiTokens.lastUsedAt"]);
  const toSummary = (r: { prefix: string; username: string; createdAt: number; lastUsedAt: number | null }): TokenSummary => ({
    prefix: r.prefix, username: r.username, createdAt: Number(r.createdAt), lastUsedAt: r.lastUsedAt === null ? null : Number(r.lastUsedAt),
  });

  return {
    /** False when the account does not exist. */
    async create(username: string, tokenHash: string, prefix: string, now: number): Promise<boolean> {
      const account = await db.selectFrom("accounts").select("id").where("username", "=", username).executeTakeFirst();
      if (!account) return false;
      await db.insertInto("apiTokens").values({ tokenHash, prefix, accountId: account.id, createdAt: now, lastUsedAt: null }).execute();
      return true;
    },

    async createFor(accountId: number, tokenHash: string, prefix: string, now: number): Promise<void> {
      await db.insertInto("apiTokens").values({ tokenHash, prefix, accountId, createdAt: now, lastUsedAt: null }).execute();
    },

    /** The account a token's hash belongs to; records the use (at most once a minute). */
    async ownerOf(tokenHash: string, now: number): Promise<TokenOwner | undefined> {
      // Read before the query: a write landing while it waits makes this entry stale at once.
      const epoch = await changeEpoch?.();
      const known = epoch === undefined ? undefined : remembered.get(tokenHash);
      let row: OwnerRow | undefined;
      if (known !== undefined && known.epoch === epoch) {
        row = known.row;
      } else {
        row = (await db.executeQuery<OwnerRow>({ ...ownerQuery, parameters: [tokenHash] })).rows[0];
        if (epoch !== undefined) {
          if (remembered.size >= REMEMBERED_TOKENS) remembered.clear();
          remembered.set(tokenHash, { epoch, row });
        }
      }
      if (!row) return undefined;
      if (row.lastUsedAt === null || now - Number(row.lastUsedAt) >= TOUCH_EVERY_MS) {
        await db.updateTable("apiTokens").set({ lastUsedAt: now }).where("tokenHash", "=", tokenHash).execute();
        remembered.delete(tokenHash);
      }
      return { accountId: row.accountId, username: row.username, documentsVersion: Number(row.documentsVersion) };
    },

    async revokeHash(tokenHash: string): Promise<boolean> {
      const r = await db.deleteFrom("apiTokens").where("tokenHash", "=", tokenHash).executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    },

    /** Revokes the one token with this prefix (of this account, when given); 0 or several match: nothing, and the count. */
    async revokePrefix(prefix: string, accountId?: number): Promise<number> {
      let q = db.selectFrom("apiTokens").select("tokenHash").where("prefix", "=", prefix);
      if (accountId !== undefined) q = q.where("accountId", "=", accountId);
      const rows = await q.execute();
      if (rows.length !== 1) return rows.length;
      await db.deleteFrom("apiTokens").where("tokenHash", "=", rows[0]!.tokenHash).execute();
      return 1;
    },

    async list(): Promise<TokenSummary[]> {
      return (await summaries().orderBy("accounts.username").orderBy("apiTokens.createdAt").execute()).map(toSummary);
    },

    async listOf(accountId: number): Promise<TokenSummary[]> {
      return (await summaries().where("apiTokens.accountId", "=", accountId).orderBy("apiTokens.createdAt").execute()).map(toSummary);
    },
  };
}

export type ApiTokensRepo = ReturnType<typeof apiTokensRepo>;
