import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/** A session id is a bearer secret: only its hash is stored (migration 0006). */
const hashOf = (sessionId: string) => createHash("sha256").update(sessionId).digest("hex");

/** Expired rows are cleared at most this often, by whichever write comes along. */
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * The web app's sessions, kept server-side so that signing out, or setting a new password, ends
 * them for good (a cookie alone could be replayed until it expired).
 */
export function appSessionsRepo(db: Kysely<Database>) {
  let lastSweep = 0;
  return {
    /** The session's stored data, or undefined when it does not exist or has expired. */
    async get(sessionId: string, now: number): Promise<string | undefined> {
      const row = await db
        .selectFrom("appSessions")
        .select(["data", "expiresAt"])
        .where("idHash", "=", hashOf(sessionId))
        .executeTakeFirst();
      return row && Number(row.expiresAt) > now ? row.data : undefined;
    },

    async set(sessionId: string, accountId: number | null, data: string, expiresAt: number, now: number): Promise<void> {
      const idHash = hashOf(sessionId);
      await db
        .insertInto("appSessions")
        .values({ idHash, accountId, data, expiresAt, createdAt: now })
        .onConflict((oc) => oc.column("idHash").doUpdateSet({ accountId, data, expiresAt }))
        .execute();
      if (now - lastSweep >= SWEEP_EVERY_MS) {
        lastSweep = now;
        await db.deleteFrom("appSessions").where("expiresAt", "<=", now).execute();
      }
    },

    async destroy(sessionId: string): Promise<void> {
      await db.deleteFrom("appSessions").where("idHash", "=", hashOf(sessionId)).execute();
    },

    /** Ends every session of an account (its password changed). */
    async destroyAllOf(accountId: number): Promise<number> {
      const r = await db.deleteFrom("appSessions").where("accountId", "=", accountId).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    /** The key signing session cookies, made once per database by migration 0006. */
    async cookieSecret(): Promise<string> {
      const row = await db.selectFrom("appSecrets").select("value").where("name", "=", "session_cookie").executeTakeFirstOrThrow();
      return row.value;
    },
  };
}

export type AppSessionsRepo = ReturnType<typeof appSessionsRepo>;
