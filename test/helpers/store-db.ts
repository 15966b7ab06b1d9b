import type { Kysely } from "kysely";
import type { Store } from "../../src/store/open-store.ts";
import type { Database } from "../../src/store/schema.ts";
import { databaseOf } from "../../src/store/store-handle.ts";

/** The database handle of an open store, for tests that inspect or damage tables directly. */
export function dbOf(store: Store): Kysely<Database> {
  return databaseOf(store);
}
