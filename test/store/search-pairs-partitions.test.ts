import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { parseSearchQuery } from "../../src/domain/search-query.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * PostgreSQL keeps the pairs of words in partitions of 256 documents each, made as documents
 * arrive (src/store/dialects/postgres-search.ts). Documents written at once into a partition that
 * does not exist yet all land, every one findable by its phrase, and a delete takes its pairs.
 */

const pgSkip = await postgresUnavailable();
const postgres = DIALECTS.find((d) => d.name === "postgres")!;

describe("search pairs' partitions on postgres", { skip: pgSkip }, () => {
  let store: Store;
  let drop: () => Promise<void>;
  const accounts: number[] = [];

  before(async () => {
    ({ store, drop } = await postgres.open());
    for (let i = 0; i < 20; i++) accounts.push((await seedAccount(store, `pairs${i}`, String(i).padStart(32, "p"), "s".repeat(32), 1)));
  });
  after(async () => drop());

  test("documents written at once into a new partition are all found by their phrases", async () => {
    for (let i = 0; i < 250; i++) await store.documents.insertWithJob(newStoreDoc(accounts[0]!, "pairs0", { title: `Filler ${i}`, state: "P" }), "convert-document");
    // Twenty at once across the boundary at key 256, each of its own account (one account's writes
    // queue on its row): several writers find the partition missing together.
    const docs = await Promise.all(
      accounts.map((a, i) => publishWithText(store, newStoreDoc(a, `pairs${i}`, { title: `Batch ${i}` }), [`The amber heron number${i} waded.`])),
    );
    const partitions = await sql<{ name: string }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      join pg_class p on p.oid = i.inhparent where p.relname = 'search_pairs' order by 1`.execute(dbOf(store));
    assert.deepEqual(partitions.rows.map((r) => r.name), ["search_pairs_0", "search_pairs_1"]);
    const found = async (q: string) =>
      (await store.search.search({ query: parseSearchQuery(q), scope: { kind: "public" }, startIndex: 0, pageSize: 100, maxHits: 1 }));
    assert.equal((await found('"amber heron"')).totalCount, 20);
    assert.deepEqual((await found('"heron number7 waded"')).matches.map((m) => m.record.title), ["Batch 7"]);

    await store.documents.deleteByNames(accounts[7]!, [docs[7]!.documentId]);
    assert.equal((await found('"amber heron"')).totalCount, 19);
    const left = await sql<{ n: number }>`select count(*)::int as n from search_pairs where doc_key not in (select doc_key from search_documents)`.execute(dbOf(store));
    assert.equal(left.rows[0]!.n, 0, "a deleted document's pairs go with it");
  });
});
