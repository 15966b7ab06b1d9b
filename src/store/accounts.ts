import type { Kysely } from "kysely";
import { SecretBox } from "../domain/secret-box.ts";
import type { Database } from "./schema.ts";

/** Read-only: one object may answer many requests (see getKeyOwnerForSigning). */
export interface KeyOwner {
  readonly accountId: number;
  readonly username: string;
  readonly apiSecret: string;
  /** Changes whenever one of the account's documents does (see migration 0003). */
  readonly documentsVersion: number;
}

export interface ResealCounts {
  resealed: number;
  current: number;
  unreadable: number;
  unreadableRevoked: number;
  changedMeanwhile: number;
}

export interface AccountSummary {
  id: number;
  username: string;
  createdAt: number;
  activeKeys: string[];
}

/** What creating an account answers: its id, or the one refusal the database decides. */
export type AccountCreate = { ok: true; id: number } | { ok: false; reason: "name-taken" };
/** What adding a key to a named account answers. */
export type KeyAdd = { ok: true } | { ok: false; reason: "not-found" };

/** Keys read recently; a busy server sees far fewer distinct keys than this. */
const REMEMBERED_KEYS = 10_000;

/**
 * `secrets` seals apiSecrets as they are written (when QUIRE_SECRET_KEY is set) and opens them as
 * they are read. `changeEpoch` (the dialect's) lets a key's owner be answered from memory while
 * nothing at all has been written to the database since it was read.
 */
export function accountsRepo(db: Kysely<Database>, secrets: SecretBox = new SecretBox([]), changeEpoch?: () => Promise<number | undefined>) {
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
  // Every request reads its key's row; while the database has not changed, the answer has not either.
  const remembered = new Map<string, { epoch: number; owner: KeyOwner | undefined }>();

  return {
    async count(): Promise<number> {
      const row = await db.selectFrom("accounts").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * Creates the account with its first key, in one transaction; "name-taken" if the username is
     * taken. The insert itself decides, so creates of one name at once (two processes) answer one
     * id and "taken" to the rest: a read first would let both pass it and one end in a unique
     * violation (PostgreSQL) or a lock it cannot take (SQLite, a read turned write).
     */
    async createWithKey(username: string, apiKey: string, apiSecret: string, now: number): Promise<AccountCreate> {
      return db.transaction().execute(async (trx) => {
        const created = await trx
          .insertInto("accounts")
          .values({ username, createdAt: now })
          .onConflict((oc) => oc.column("username").doNothing())
          .returning("id")
          .executeTakeFirst();
        if (!created) return { ok: false, reason: "name-taken" };
        const { id } = created;
        await trx
          .insertInto("apiKeys")
          .values({ apiKey, accountId: id, apiSecret: secrets.seal(apiSecret, apiKey), createdAt: now, revokedAt: null })
          .execute();
        return { ok: true, id };
      });
    },

    async addKey(username: string, apiKey: string, apiSecret: string, now: number): Promise<KeyAdd> {
      const account = await db.selectFrom("accounts").select("id").where("username", "=", username).executeTakeFirst();
      if (!account) return { ok: false, reason: "not-found" };
      await db
        .insertInto("apiKeys")
        .values({ apiKey, accountId: account.id, apiSecret: secrets.seal(apiSecret, apiKey), createdAt: now, revokedAt: null })
        .execute();
      return { ok: true };
    },

    /** The only query that reads a secret: the signature check needs it. */
    async getKeyOwnerForSigning(apiKey: string): Promise<KeyOwner | undefined> {
      // Read before the query: a write landing while it waits makes this entry stale at once.
      const epoch = await changeEpoch?.();
      if (epoch !== undefined) {
        const known = remembered.get(apiKey);
        if (known?.epoch === epoch) return known.owner;
      }
      const { rows } = await db.executeQuery<KeyOwner>({ ...keyOwnerQuery, parameters: [apiKey] });
      const row = rows[0];
      const owner = row && { ...row, apiSecret: openSecret(row.apiSecret, apiKey) };
      if (epoch !== undefined) {
        if (remembered.size >= REMEMBERED_KEYS) remembered.clear();
        remembered.set(apiKey, { epoch, owner });
      }
      return owner;
    },

    /**
     * Seals every stored apiSecret with the first secret key, so older keys can be dropped from
     * QUIRE_SECRET_KEY. Rows already sealed with it are opened too, to find damaged ones. A row
     * that cannot be opened is left as it is: counted as `unreadable` when its key is active, as
     * `unreadableRevoked` when it is revoked (it signs nothing, so nothing is lost). A row another
     * process changed between the read and the write is left to it and counted as
     * `changedMeanwhile`: run the pass again once every process has the new key first.
     */
    async resealSecrets(): Promise<ResealCounts> {
      if (!secrets.enabled) throw new Error("QUIRE_SECRET_KEY is not set: there is no key to seal with");
      const rows = await db.selectFrom("apiKeys").select(["apiKey", "apiSecret", "revokedAt"]).execute();
      const counts: ResealCounts = { resealed: 0, current: 0, unreadable: 0, unreadableRevoked: 0, changedMeanwhile: 0 };
      for (const row of rows) {
        let secret: string;
        try {
          secret = secrets.open(row.apiSecret, row.apiKey);
        } catch {
          if (row.revokedAt === null) counts.unreadable++;
          else counts.unreadableRevoked++;
          continue;
        }
        if (secrets.isCurrent(row.apiSecret)) {
          counts.current++;
          continue;
        }
        const result = await db
          .updateTable("apiKeys")
          .set({ apiSecret: secrets.seal(secret, row.apiKey) })
          .where("apiKey", "=", row.apiKey)
          .where("apiSecret", "=", row.apiSecret)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) > 0) counts.resealed++;
        else counts.changedMeanwhile++;
      }
      return counts;
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

    /** Sets (or, with null, removes) the web app's password; false when there is no such account. */
    async setPasswordHash(username: string, passwordHash: string | null): Promise<boolean> {
      const r = await db.updateTable("accounts").set({ passwordHash }).where("username", "=", username).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** Replaces the hash only while it is still `before` (a rehash must not undo a password set meanwhile). */
    async replacePasswordHash(accountId: number, before: string, passwordHash: string): Promise<boolean> {
      const r = await db.updateTable("accounts").set({ passwordHash }).where("id", "=", accountId).where("passwordHash", "=", before).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** What signing in to the web app checks. */
    async signInRecord(username: string): Promise<{ id: number; username: string; passwordHash: string | null } | undefined> {
      return db.selectFrom("accounts").select(["id", "username", "passwordHash"]).where("username", "=", username).executeTakeFirst();
    },

    async byId(id: number): Promise<{ id: number; username: string } | undefined> {
      return db.selectFrom("accounts").select(["id", "username"]).where("id", "=", id).executeTakeFirst();
    },

    /** One account's keys, newest first; never their secrets (those are shown once, when made). */
    async keysOf(accountId: number): Promise<Array<{ apiKey: string; createdAt: number; revokedAt: number | null; label: string }>> {
      return db
        .selectFrom("apiKeys")
        .select(["apiKey", "createdAt", "revokedAt", "label"])
        .where("accountId", "=", accountId)
        .orderBy("createdAt", "desc")
        .orderBy("apiKey")
        .execute();
    },

    async addKeyTo(accountId: number, apiKey: string, apiSecret: string, now: number, label = ""): Promise<void> {
      await db
        .insertInto("apiKeys")
        .values({ apiKey, accountId, apiSecret: secrets.seal(apiSecret, apiKey), createdAt: now, revokedAt: null, label })
        .execute();
    },

    /** Revokes one of this account's keys; false when it has no such active key (another account's included). */
    async revokeKeyOf(accountId: number, apiKey: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable("apiKeys")
        .set({ revokedAt: now })
        .where("apiKey", "=", apiKey)
        .where("accountId", "=", accountId)
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

    /** Whether the account publishes readers' comments at once, else holds them for approval (decisions §16). */
    async publishesCommentsAtOnce(accountId: number): Promise<boolean> {
      const row = await db.selectFrom("accounts").select("publishComments").where("id", "=", accountId).executeTakeFirst();
      return row?.publishComments === 1;
    },

    async setPublishesCommentsAtOnce(accountId: number, atOnce: boolean): Promise<void> {
      await db.updateTable("accounts").set({ publishComments: atOnce ? 1 : 0 }).where("id", "=", accountId).execute();
    },
  };
}

export type AccountsRepo = ReturnType<typeof accountsRepo>;
