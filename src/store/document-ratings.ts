import type { Kysely } from "kysely";
import type { RatingCounts } from "../domain/comments.ts";
import type { Database } from "./schema.ts";

type StarsColumn = "stars1" | "stars2" | "stars3" | "stars4" | "stars5";
const column = (stars: number) => `stars${stars}` as StarsColumn;

/** What a rating came to: the document's counts after it, or why it was not taken. */
export type RatingOutcome = { ok: true; counts: RatingCounts } | { ok: false; reason: "not-found" | "ratings-off" };

/**
 * Ratings (decisions §16): one row per reader, document and UTC day, and the document's five
 * counts on its row, changed in the same transaction. A reader who rates again that day replaces
 * their rating: the old count goes down as the new one goes up. The counts are on the documents
 * row, so the change moves the account's documents_version (migration 0003's trigger) and no
 * cached list answer shows the old figures.
 */
export function documentRatingsRepo(db: Kysely<Database>) {
  return {
    async rate(r: { documentId: string; day: string; readerKey: string; stars: number; now: number }): Promise<RatingOutcome> {
      return db.transaction().execute(async (trx): Promise<RatingOutcome> => {
        const doc = await trx.selectFrom("documents").select(["state", "ratingsAllowed"]).where("documentId", "=", r.documentId).executeTakeFirst();
        if (!doc || doc.state !== "A") return { ok: false, reason: "not-found" };
        if (doc.ratingsAllowed !== 1) return { ok: false, reason: "ratings-off" };
        const bump = async (stars: number, by: 1 | -1) =>
          trx
            .updateTable("documents")
            .set((eb) => ({ [column(stars)]: eb(column(stars), "+", by) }))
            .where("documentId", "=", r.documentId)
            .execute();
        const inserted = await trx
          .insertInto("documentRatings")
          .values({ documentId: r.documentId, day: r.day, readerKey: r.readerKey, stars: r.stars, createdAt: r.now, updatedAt: r.now })
          .onConflict((oc) => oc.columns(["documentId", "day", "readerKey"]).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) {
          await bump(r.stars, 1);
        } else {
          // The reader rated today already: replace it. Guarded by the old value, so two of their
          // requests at once move the counts once each, never twice for one.
          for (;;) {
            const old = await trx
              .selectFrom("documentRatings")
              .select("stars")
              .where("documentId", "=", r.documentId)
              .where("day", "=", r.day)
              .where("readerKey", "=", r.readerKey)
              .executeTakeFirstOrThrow();
            if (old.stars === r.stars) break;
            const changed = await trx
              .updateTable("documentRatings")
              .set({ stars: r.stars, updatedAt: r.now })
              .where("documentId", "=", r.documentId)
              .where("day", "=", r.day)
              .where("readerKey", "=", r.readerKey)
              .where("stars", "=", old.stars)
              .executeTakeFirst();
            if (Number(changed.numUpdatedRows) !== 1) continue;
            await bump(old.stars, -1);
            await bump(r.stars, 1);
            break;
          }
        }
        const row = await trx
          .selectFrom("documents")
          .select(["stars1", "stars2", "stars3", "stars4", "stars5"])
          .where("documentId", "=", r.documentId)
          .executeTakeFirstOrThrow();
        return { ok: true, counts: [row.stars1, row.stars2, row.stars3, row.stars4, row.stars5] };
      });
    },
  };
}

export type DocumentRatingsRepo = ReturnType<typeof documentRatingsRepo>;
