import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/**
 * The database handle behind an open store, kept off the public `Store` type so that nothing
 * outside src/store/ can reach the tables except through the repositories. Tests that inspect
 * tables get it through test/helpers/store-db.ts; scripts/architecture.ts forbids this module to
 * src/ outside src/store/.
 */
const handles = new WeakMap<object, Kysely<Database>>();

export function attachDatabase<T extends object>(store: T, db: Kysely<Database>): T {
  handles.set(store, db);
  return store;
}

export function databaseOf(store: object): Kysely<Database> {
  const db = handles.get(store);
  if (!db) throw new Error("not a store opened by openStore");
  return db;
}
