import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import pg from "pg";
import { parseSearchQuery } from "../../src/domain/search-query.ts";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { fillerPage, newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * Migration 0012 rebuilds an index made before it (matching by positions, phrases checked page by
 * page) into terms and pairs of words, from what the index holds: nothing is lost, phrases are
 * found, and a delete still takes a document's entries with it.
 */

const pgSkip = await postgresUnavailable();

/** The index as migration 0007 made it, before 0012. */
const BEFORE_0012 = {
  sqlite: [
    "drop trigger search_documents_delete",
    "drop trigger search_documents_scope",
    "drop table search_words_fts",
    "drop table search_pairs_fts",
    "drop table search_meta_fts",
    "alter table search_documents drop column account_id",
    "alter table search_documents drop column state",
    "alter table search_documents drop column access",
    `create virtual table search_docs_fts using fts5(title, tags, description, body, content='', contentless_delete=1,
       tokenize='porter unicode61 remove_diacritics 2')`,
    `insert into search_docs_fts (rowid, title, tags, description, body) select s.doc_key, d.title, '', d.description, '' from search_documents s
       join documents d on d.document_id = s.document_id`,
    `create trigger search_documents_delete after delete on search_documents begin
       delete from search_docs_fts where rowid = old.doc_key;
       delete from search_pages_fts where rowid > old.doc_key * 131072 and rowid < (old.doc_key + 1) * 131072;
     end`,
  ],
  postgres: [
    "drop trigger search_documents_scope on documents",
    "drop function search_documents_scope()",
    "drop index search_documents_meta",
    "drop table search_configs",
    "create index search_documents_config on search_documents (config)",
    "alter index search_documents_words reset (gin_pending_list_limit)",
    "drop trigger search_pairs_delete on search_documents",
    "drop function search_pairs_delete()",
    "drop function search_pairs_holding(int8[])",
    "drop function search_pairs_holding_any(int8[])",
    "drop table search_pairs",
    "alter table search_documents drop column account_id, drop column state, drop column access",
  ],
};

for (const dialect of DIALECTS) {
  describe(`search index upgrade (0012) on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    let accountId: number;

    before(async () => {
      ({ store, url, drop } = await dialect.open());
      accountId = (await seedAccount(store, "olduser", "o".repeat(32), "s".repeat(32), 1));
    });
    after(async () => drop());

    test("an index made before 0012 is rebuilt: words, phrases and pages found, deletes still complete", async () => {
      const pages = Array.from({ length: 12 }, (_, i) => fillerPage(i + 1));
      pages[9] = "The quartz vein ran under the old mill, said the surveyor.";
      const survey = await publishWithText(store, newStoreDoc(accountId, "olduser", { title: "Mineral survey", tags: ["field notes"] }), pages);
      const other = await publishWithText(store, newStoreDoc(accountId, "olduser", { title: "Mill accounts" }), ["The old mill paid its workers in quartz."]);
      for (const statement of BEFORE_0012[dialect.name]) await sql.raw(statement).execute(dbOf(store));
      await sql`delete from kysely_migration where name = '0012_search_pairs'`.execute(dbOf(store));
      await store.close();

      const upgraded = await openStore(url);
      try {
        const search = async (q: string) =>
          upgraded.search.search({ query: parseSearchQuery(q), scope: { kind: "account", accountId, states: ["A"] }, startIndex: 0, pageSize: 10, maxHits: 5 });
        const titles = async (q: string) => (await search(q)).matches.map((m) => m.record.title).sort();
        assert.deepEqual(await titles("quartz"), ["Mill accounts", "Mineral survey"]);
        assert.deepEqual(await titles('"quartz vein"'), ["Mineral survey"]);
        assert.deepEqual(await titles('"under the old mill"'), ["Mineral survey"]);
        assert.deepEqual(await titles('"field notes"'), ["Mineral survey"]);
        assert.deepEqual(await titles('"mill paid"'), ["Mill accounts"]);
        const [found] = (await search('"quartz vein"')).matches;
        assert.deepEqual(found!.hits.map((h) => h.page), [10]);
        assert.match(found!.hits[0]!.snippet, /\[\[quartz( |\]\] \[\[)vein\]\]/, "the phrase, or each of its words, marked");
        assert.deepEqual((await search("survey")).matches[0]!.record.documentId, survey.documentId, "ranked by the title");

        // The scope the upgrade copied beside each entry, then kept by its trigger.
        const publicTitles = async (q: string) =>
          (await upgraded.search.search({ query: parseSearchQuery(q), scope: { kind: "public" }, startIndex: 0, pageSize: 10, maxHits: 5 })).matches.map((m) => m.record.title);
        assert.deepEqual((await publicTitles("quartz")).sort(), ["Mill accounts", "Mineral survey"]);
        await upgraded.documents.update(accountId, survey.documentId, { access: "private", updatedAt: Date.now() });
        assert.deepEqual(await publicTitles("quartz"), ["Mill accounts"]);

        await upgraded.documents.deleteByNames(accountId, [other.documentId]);
        assert.deepEqual(await titles("quartz"), ["Mineral survey"]);
        assert.deepEqual(await titles('"mill paid"'), []);
      } finally {
        await upgraded.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`a search index upgrade (0012) cut short on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    test("a rebuild that fails partway leaves the index as it was, and runs whole at the next start", async () => {
      const { store, url, drop } = await dialect.open();
      try {
        const accountId = (await seedAccount(store, "cutuser", "c".repeat(32), "s".repeat(32), 1));
        await publishWithText(store, newStoreDoc(accountId, "cutuser", { title: "First survey" }), ["The garnet seam ran east."]);
        const second = await publishWithText(store, newStoreDoc(accountId, "cutuser", { title: "Second survey" }), ["The garnet seam ran west."]);
        for (const statement of BEFORE_0012[dialect.name]) await sql.raw(statement).execute(dbOf(store));
        await sql`delete from kysely_migration where name = '0012_search_pairs'`.execute(dbOf(store));
        // The second document's row makes the rebuild fail after the first is rebuilt.
        await sql`update documents set tags = 'not a list' where document_id = ${second.documentId}`.execute(dbOf(store));
        await store.close();

        await assert.rejects(openStore(url));
        const table = dialect.name === "sqlite" ? "search_docs_fts" : "search_documents";
        const probe = await openStoreUnmigrated(url, dialect.name);
        try {
          assert.equal(await probe.has(table), true, "the old index is still there");
          assert.equal(await probe.has(dialect.name === "sqlite" ? "search_words_fts" : "search_pairs"), false, "and nothing of the new one");
          await probe.run(`update documents set tags = '[]' where document_id = '${second.documentId}'`);
        } finally {
          await probe.close();
        }

        const upgraded = await openStore(url);
        try {
          const found = await upgraded.search.search({ query: parseSearchQuery('"garnet seam"'), scope: { kind: "account", accountId, states: ["A"] }, startIndex: 0, pageSize: 10, maxHits: 5 });
          assert.deepEqual(found.matches.map((m) => m.record.title).sort(), ["First survey", "Second survey"]);
        } finally {
          await upgraded.close();
        }
      } finally {
        await drop();
      }
    });
  });
}

/** A plain connection to a store's database, without running its migrations. */
async function openStoreUnmigrated(url: string, dialect: "sqlite" | "postgres") {
  if (dialect === "sqlite") {
    const db = new SQLite(url);
    return {
      has: async (name: string) => db.prepare("select 1 from sqlite_master where name = ?").get(name) !== undefined,
      run: async (statement: string) => void db.exec(statement),
      close: async () => db.close(),
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    has: async (name: string) => (await client.query("select 1 from information_schema.tables where table_schema = current_schema() and table_name = $1", [name])).rows.length > 0,
    run: async (statement: string) => void (await client.query(statement)),
    close: () => client.end(),
  };
}
