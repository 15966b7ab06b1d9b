import type { Kysely } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import { fromRow, listedPublicly } from "./document-rows.ts";
import type { Database } from "./schema.ts";

/** Records remembered at once (then the memory starts again). */
const REMEMBERED_RECORDS = 10_000;

/**
 * The reads of the public web pages (decisions §10). Private documents are found by their address
 * only; every listing here keeps to public, active documents. `changeEpoch` (the dialect's, SQLite
 * only) lets a reader's document be answered from memory while nothing at all has been written to
 * the database since it was read.
 */
export function publicPagesRepo(db: Kysely<Database>, changeEpoch?: () => Promise<number | undefined>) {
  const documentOf = (username: string) =>
    db
      .selectFrom("documents")
      .innerJoin("accounts", "accounts.id", "documents.accountId")
      .selectAll("documents")
      .select("accounts.username")
      .where("accounts.username", "=", username)
      // A v2 draft is never public, not even at its documentId (decisions §14).
      .where("documents.draft", "=", 0);

  /**
   * A reader's document by its address or its documentId: built and compiled once, since every
   * public page looks one up and building the query cost about as much as running it (34 µs against
   * 30). Each is compiled with stand-ins for the owner and the name, replaced at each run; the
   * other parameters (the draft flag) stay as compiled.
   */
  const OWNER = "\u0000owner";
  const NAME = "\u0000name";
  const compiledBy = (column: "documents.name" | "documents.documentId") => {
    const query = documentOf(OWNER).where(column, "=", NAME).compile();
    if (query.parameters.filter((v) => v === OWNER || v === NAME).length !== 2) throw new Error(`the document query by ${column} must take the owner and the name once each`);
    /**
     * Every view of a page reads its document: the query, its row's conversion and the record's
     * copies were a third of a reader page's processor time and most of what it allocated. A
     * remembered record is frozen, since every request that asks for it shares it.
     */
    const remembered = new Map<string, { epoch: number; doc: DocumentRecord | undefined }>();
    return async (username: string, name: string): Promise<DocumentRecord | undefined> => {
      // Read before the query: a write landing while it waits makes this entry stale at once.
      const epoch = await changeEpoch?.();
      const key = `${username}\0${name}`;
      if (epoch !== undefined) {
        const known = remembered.get(key);
        if (known?.epoch === epoch) return known.doc;
      }
      const parameters = query.parameters.map((v) => (v === OWNER ? username : v === NAME ? name : v));
      const row = (await db.executeQuery<Parameters<typeof fromRow>[0]>({ ...query, parameters })).rows[0];
      const doc = row ? frozen(fromRow(row)) : undefined;
      if (epoch !== undefined) {
        if (remembered.size >= REMEMBERED_RECORDS) remembered.clear();
        remembered.set(key, { epoch, doc });
      }
      return doc;
    };
  };
  const byName = compiledBy("documents.name");
  const byId = compiledBy("documents.documentId");

  return {
    async accountByUsername(username: string): Promise<{ id: number; username: string } | undefined> {
      return db.selectFrom("accounts").select(["id", "username"]).where("username", "=", username).executeTakeFirst();
    },

    /** A document by its address, whatever its state or access: the caller applies the rules. */
    documentByAddress(username: string, name: string): Promise<DocumentRecord | undefined> {
      return byName(username, name);
    },

    /** The document that had this name before a rename (issue 26 item 4), if no document has it now. */
    async documentByOldName(username: string, name: string): Promise<DocumentRecord | undefined> {
      const row = await documentOf(username)
        .innerJoin("documentOldNames", (j) => j.onRef("documentOldNames.documentId", "=", "documents.documentId").onRef("documentOldNames.accountId", "=", "accounts.id"))
        .where("documentOldNames.name", "=", name)
        .executeTakeFirst();
      return row ? fromRow(row) : undefined;
    },

    /** A document by its owner and `documentId`: its first address, which stays valid after a name is given. */
    documentById(username: string, documentId: string): Promise<DocumentRecord | undefined> {
      return byId(username, documentId);
    },

    /** Every public, active document's address for the sitemap, most recently changed first. */
    async sitemapEntries(limit: number): Promise<Array<{ username: string; name: string; updatedAt: number }>> {
      return db
        .selectFrom("documents")
        .innerJoin("accounts", "accounts.id", "documents.accountId")
        .select(["accounts.username", "documents.name", "documents.updatedAt"])
        .where(listedPublicly)
        .orderBy("documents.updatedAt", "desc")
        .orderBy("documents.documentId")
        .limit(limit)
        .execute();
    },

    /**
     * The newest public, active documents of every account, for the home page. Explicit ones are
     * left out: nothing of them (cover, title) shows before a reader agrees, on their own page.
     */
    async recentPublic(limit: number): Promise<DocumentRecord[]> {
      const rows = await db
        .selectFrom("documents")
        .innerJoin("accounts", "accounts.id", "documents.accountId")
        .selectAll("documents")
        .select("accounts.username")
        .where(listedPublicly)
        .where("documents.explicit", "=", 0)
        .orderBy("documents.publishDate", "desc")
        .orderBy("documents.documentId")
        .limit(limit)
        .execute();
      return rows.map(fromRow);
    },

    /** The start page of an embed, when it is an embed of this document. */
    async embedStartPage(accountId: number, documentId: string, embedId: number): Promise<number | undefined> {
      if (!Number.isSafeInteger(embedId) || embedId < 1 || embedId > 2_147_483_647) return undefined;
      const row = await db
        .selectFrom("embeds")
        .select("readerStartPage")
        .where("accountId", "=", accountId)
        .where("documentId", "=", documentId)
        .where("id", "=", embedId)
        .executeTakeFirst();
      return row?.readerStartPage;
    },
  };
}

function frozen(d: DocumentRecord): DocumentRecord {
  Object.freeze(d.tags);
  Object.freeze(d.folderIds);
  Object.freeze(d.ratingCounts);
  return Object.freeze(d);
}
