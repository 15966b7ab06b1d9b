import type { Kysely } from "kysely";
import type { StoreDialect } from "./dialects/dialect.ts";
import type { Database } from "./schema.ts";

/** Documents read per round of the backfill: bounds the memory a large table takes. */
const BATCH = 500;

/**
 * Migration 0007's backfill: every existing document's title, tags and description go into the
 * index. The text of documents converted before the index existed lives in the blob store,
 * which the store cannot read: it is indexed when such a document is converted again.
 */
export async function backfillSearch(anyDb: Kysely<unknown>, dialect: Pick<StoreDialect, "search">): Promise<void> {
  const db = anyDb as Kysely<Database>;
  let after = "";
  for (;;) {
    const rows = await db
      .selectFrom("documents")
      .select(["documentId", "accountId", "state", "access", "title", "description", "tags", "language"])
      .where("documentId", ">", after)
      .orderBy("documentId")
      .limit(BATCH)
      .execute();
    if (rows.length === 0) return;
    for (const row of rows) await dialect.search.index(db, row, undefined);
    after = rows[rows.length - 1]!.documentId;
  }
}
