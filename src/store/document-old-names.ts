import type { Kysely, Transaction } from "kysely";
import type { Database } from "./schema.ts";

/**
 * A document's earlier names (issue 26 item 4): each leads to the document, for good, until
 * another document of the account takes the name (then the name is that one's, and the row goes).
 * Rows go with their document by cascade. Written only inside the transaction that renames.
 */

type Db = Kysely<Database> | Transaction<Database>;

/**
 * After a document of the account went from `oldName` to `newName`: the new name is no longer
 * anyone's old one, and the old one leads here. A name that is the document's documentId needs no
 * row (that address always finds it), and a document whose name became its documentId keeps none:
 * it was made private, and its address, no one can guess, is all that protects it.
 */
export async function recordRename(db: Db, r: { accountId: number; documentId: string; oldName: string; newName: string; now: number }): Promise<void> {
  if (r.oldName === r.newName) return;
  await releaseName(db, r.accountId, r.newName);
  if (r.newName === r.documentId) {
    await db.deleteFrom("documentOldNames").where("documentId", "=", r.documentId).execute();
    return;
  }
  if (r.oldName === r.documentId) return;
  await releaseName(db, r.accountId, r.oldName);
  await db.insertInto("documentOldNames").values({ accountId: r.accountId, name: r.oldName, documentId: r.documentId, renamedAt: r.now }).execute();
}

/** A document of the account now has this name: it no longer leads to the one that had it before. */
export async function releaseName(db: Db, accountId: number, name: string): Promise<void> {
  await db.deleteFrom("documentOldNames").where("accountId", "=", accountId).where("name", "=", name).execute();
}
