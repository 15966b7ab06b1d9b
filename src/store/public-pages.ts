import type { Kysely } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import { fromRow, listedPublicly } from "./document-rows.ts";
import type { Database } from "./schema.ts";

/**
 * The reads of the public web pages (decisions §10). Private documents are found by their address
 * only; every listing here keeps to public, active documents.
 */
export function publicPagesRepo(db: Kysely<Database>) {
  const documentOf = (username: string) =>
    db
      .selectFrom("documents")
      .innerJoin("accounts", "accounts.id", "documents.accountId")
      .selectAll("documents")
      .select("accounts.username")
      .where("accounts.username", "=", username)
      // A v2 draft is never public, not even at its documentId (decisions §14).
      .where("documents.draft", "=", 0);

  return {
    async accountByUsername(username: string): Promise<{ id: number; username: string } | undefined> {
      return db.selectFrom("accounts").select(["id", "username"]).where("username", "=", username).executeTakeFirst();
    },

    /** A document by its address, whatever its state or access: the caller applies the rules. */
    async documentByAddress(username: string, name: string): Promise<DocumentRecord | undefined> {
      const row = await documentOf(username).where("documents.name", "=", name).executeTakeFirst();
      return row ? fromRow(row) : undefined;
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
    async documentById(username: string, documentId: string): Promise<DocumentRecord | undefined> {
      const row = await documentOf(username).where("documents.documentId", "=", documentId).executeTakeFirst();
      return row ? fromRow(row) : undefined;
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
