import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { LocalBlobStore } from "../../src/blobs/local-blob-store.ts";
import { INDEX_TEXT } from "../../src/domain/job-kinds.ts";
import { parseSearchQuery } from "../../src/domain/search-query.ts";
import { indexTextHandler } from "../../src/jobs/index-text.ts";
import type { Job } from "../../src/store/jobs.ts";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { fillerPage, newStoreDoc } from "../helpers/search-docs.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * Documents published before the search index existed (migration 0007) were indexed by title,
 * tags and description only. Migration 0011 queues an `index-text` job for every published
 * document, and the job puts its stored text into the index, as publishing does now.
 */

const pgSkip = await postgresUnavailable();

for (const dialect of DIALECTS) {
  describe(`index-text on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    let blobDir: string;
    let blobs: LocalBlobStore;
    let accountId: number;

    before(async () => {
      ({ store, url, drop } = await dialect.open());
      blobDir = await mkdtemp(join(tmpdir(), "quire-index-text-"));
      blobs = new LocalBlobStore(blobDir);
      accountId = (await seedAccount(store, "olduser", "o".repeat(32), "s".repeat(32), 1));
    });
    after(async () => {
      await drop();
      await rm(blobDir, { recursive: true, force: true });
    });

    /** A document published the way Quire did before 0007: no page text in the index, its text.json in the blob store. */
    async function publishedBeforeSearch(title: string, pages: string[] | undefined) {
      const doc = newStoreDoc(accountId, "olduser", { title, state: "P" });
      await store.documents.insertWithJob(doc, "convert-document");
      await store.documents.markActive(doc.documentId, { pageCount: 5, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, Date.now());
      if (pages) {
        const text = JSON.stringify(pages.map((t, i) => ({ page: i + 1, text: t, words: [] })));
        await blobs.put(blobKeys.text(doc.blobId), Readable.from([text]));
      }
      return doc;
    }
    const found = async (q: string) =>
      (await store.search.search({ query: parseSearchQuery(q), scope: { kind: "account", accountId, states: ["A"] }, startIndex: 0, pageSize: 10, maxHits: 5 })).matches;
    const run = (documentId: string) =>
      indexTextHandler({ store, blobs }).run({ job: { documentId, kind: INDEX_TEXT } as Job, signal: new AbortController().signal });

    test("an upgrade queues one job per published document; each puts the stored text in the index, once", async () => {
      const pages = [1, 2, 3, 4, 5].map(fillerPage);
      pages[2] = "The zanzibarite sample was found on the third page.";
      const old = await publishedBeforeSearch("Mineral survey", pages);
      const pending = newStoreDoc(accountId, "olduser", { title: "Still converting", state: "P" });
      await store.documents.insertWithJob(pending, "convert-document");
      assert.deepEqual(await found("zanzibarite"), [], "before: found by its title only");
      assert.equal((await found("mineral")).length, 1);

      // The upgrade: migration 0011 runs on a database that has documents.
      await sql`delete from kysely_migration where name = '0011_index_old_text'`.execute(dbOf(store));
      const upgraded = await openStore(url);
      try {
        const queued = await dbOf(upgraded).selectFrom("jobs").select(["documentId", "state"]).where("kind", "=", INDEX_TEXT).execute();
        assert.deepEqual(queued, [{ documentId: old.documentId, state: "queued" }], "published documents only");
      } finally {
        await upgraded.close();
      }

      assert.equal(await run(old.documentId), "success");
      const matches = await found("zanzibarite");
      assert.deepEqual(matches.map((m) => m.record.documentId), [old.documentId]);
      assert.deepEqual(matches[0]!.hits.map((h) => h.page), [3]);
      assert.match(matches[0]!.hits[0]!.snippet, /\[\[zanzibarite\]\]/i);
      assert.equal(await run(old.documentId), "skipped", "its text is in the index now");
    });

    test("a document without stored text, a deleted one, or one published since the index exists is skipped", async () => {
      const noText = await publishedBeforeSearch("No text at all", undefined);
      assert.equal(await run(noText.documentId), "skipped");
      const deleted = await publishedBeforeSearch("Gone", ["The obsidianite page."]);
      await store.documents.deleteByNames(accountId, [deleted.documentId]);
      assert.equal(await run(deleted.documentId), "skipped");
      assert.deepEqual(await found("obsidianite"), []);
      const recent = newStoreDoc(accountId, "olduser", { title: "Recent", state: "P" });
      await store.documents.insertWithJob(recent, "convert-document");
      await store.documents.markActive(recent.documentId, { pageCount: 1, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined, pageTexts: ["The basaltite page."] }, Date.now());
      assert.equal(await run(recent.documentId), "skipped");
      assert.equal((await found("basaltite")).length, 1);
    });
  });
}
