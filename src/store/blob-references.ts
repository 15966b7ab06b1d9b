import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/** Lookups in chunks well under either dialect's bound on parameters per statement. */
const CHUNK = 500;

/** For the orphan clean-up: which blob folders a document record still owns. */
export function blobReferencesRepo(db: Kysely<Database>) {
  return {
    /** The subset of `blobIds` that some document row, or a document's replacement, references. */
    async referencedBlobIds(blobIds: readonly string[]): Promise<Set<string>> {
      const found = new Set<string>();
      for (let i = 0; i < blobIds.length; i += CHUNK) {
        const chunk = blobIds.slice(i, i + CHUNK);
        const rows = await db.selectFrom("documents").select("blobId").where("blobId", "in", chunk).execute();
        for (const r of rows) found.add(r.blobId);
        // A new file converting beside a published document's pages (migration 0016) is owned too.
        const replacing = await db.selectFrom("documentReplacements").select("blobId").where("blobId", "in", chunk).execute();
        for (const r of replacing) found.add(r.blobId);
      }
      return found;
    },
  };
}

export type BlobReferencesRepo = ReturnType<typeof blobReferencesRepo>;
