import type { Kysely } from "kysely";
import { newDailySalt, readerKey, utcDay } from "../domain/reader-identity.ts";
import type { Database } from "./schema.ts";

/** What a route knows of a reader when it asks for their key. */
export interface ReaderKeyInput {
  /** The client's address as the server sees it (request.ip); hashed, never stored. */
  address: string;
  /** The User-Agent header ("" when absent); hashed, never stored. */
  userAgent: string;
  documentId: string;
  /** Epoch ms: picks the UTC day, hence the salt. */
  now: number;
}

/**
 * The daily salt of reader recognition (decisions §15, migration 0013): one row per UTC day, made
 * by whichever process asks first and read by every other, so all processes sharing the database
 * give a reader the same key that day. A day's row is deleted as soon as a later day's salt is
 * made (and by `deleteBefore`, which the statistics flush calls): then that day's keys can no
 * longer be recomputed from an address.
 */
export function dailySaltsRepo(db: Kysely<Database>) {
  // One lookup per day and process; callers asking at once share it. `value` is set once it is
  // read, with the day's bounds, so the request path gets it without a promise or a date (`cachedSalt`).
  let cached: { day: string; salt: Promise<string>; value?: string; from: number; to: number } | undefined;

  async function load(day: string): Promise<string> {
    // Days before this one lose their salt first: it is no longer anybody's to use.
    await db.deleteFrom("dailySalts").where("day", "<", day).execute();
    // Several processes may arrive at once: the first insert wins, the others keep its salt.
    await db
      .insertInto("dailySalts")
      .values({ day, salt: newDailySalt() })
      .onConflict((oc) => oc.column("day").doNothing())
      .execute();
    const row = await db.selectFrom("dailySalts").select("salt").where("day", "=", day).executeTakeFirstOrThrow();
    return row.salt;
  }

  async function saltFor(now: number): Promise<string> {
    const day = utcDay(now);
    if (cached?.day !== day) {
      const salt = load(day);
      const from = Date.parse(`${day}T00:00:00.000Z`);
      const entry: NonNullable<typeof cached> = { day, salt, from, to: from + 86_400_000 };
      cached = entry;
      salt.then(
        (value) => void (entry.value = value),
        // A failed lookup (database gone) is not kept: the next caller tries again.
        () => {
          if (cached === entry) cached = undefined;
        },
      );
    }
    return cached.salt;
  }

  return {
    /** The salt of `now`'s UTC day, made if the day has none yet. */
    saltFor,

    /** `now`'s salt if this process has read it already; else undefined (never a query). */
    cachedSalt(now: number): string | undefined {
      return cached !== undefined && now >= cached.from && now < cached.to ? cached.value : undefined;
    },

    /**
     * The salt of `now`'s day, or of the later day this process has moved on to: a batch written
     * just after midnight keys the last second's readers of the day before under the new salt
     * rather than make the old day's salt again once it is gone.
     */
    async saltNoOlderThan(now: number): Promise<string> {
      return cached !== undefined && utcDay(now) < cached.day ? cached.salt : saltFor(now);
    },

    /**
     * "The reader key" of one reader of one document on `now`'s UTC day: the same for the same
     * address, user agent and document all that day, in every process; unrelated on any other day.
     */
    async readerKey(input: ReaderKeyInput): Promise<string> {
      return readerKey(await saltFor(input.now), input.address, input.userAgent, input.documentId);
    },

    /** Deletes the salts of the days before `now`'s; answers how many were deleted. */
    async deleteBefore(now: number): Promise<number> {
      const r = await db.deleteFrom("dailySalts").where("day", "<", utcDay(now)).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}

export type DailySaltsRepo = ReturnType<typeof dailySaltsRepo>;
