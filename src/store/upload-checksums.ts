import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/**
 * The content hash of files uploaded through the web app (migration 0017), so the upload page can
 * say that a file was uploaded before, and as which document. A row goes with its document.
 */
export function uploadChecksumsRepo(db: Kysely<Database>) {
  return {
    async record(accountId: number, documentId: string, sha256: string): Promise<void> {
      await db.insertInto("uploadChecksums").values({ documentId, accountId, sha256 }).onConflict((oc) => oc.column("documentId").doNothing()).execute();
    },

    /** The account's earliest document (other than `exceptDocumentId`) made from the same content, if any. */
    async earlierOf(accountId: number, sha256: string, exceptDocumentId: string): Promise<{ documentId: string; title: string } | undefined> {
      return db
        .selectFrom("uploadChecksums as c")
        .innerJoin("documents as d", "d.documentId", "c.documentId")
        .select(["d.documentId", "d.title"])
        .where("c.accountId", "=", accountId)
        .where("d.accountId", "=", accountId)
        .where("c.sha256", "=", sha256)
        .where("c.documentId", "<>", exceptDocumentId)
        .orderBy("d.createdAt", "asc")
        .limit(1)
        .executeTakeFirst();
    },
  };
}
