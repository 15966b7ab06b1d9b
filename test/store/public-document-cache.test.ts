import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * Every public page reads its document by address. On SQLite the record is kept in memory while
 * the database reports no write at all since it was read (public-pages.ts); these tests change the
 * document in the ways a deployment can (this store, raw SQL, another connection: the worker, the
 * CLI, another server) and expect the very next read to see it. PostgreSQL reads the row every
 * time; the same tests hold there.
 */

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: ["a"], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`a reader's document by address on ${dialect.name}`, { skip }, () => {
    let store: Store;
    /** A second connection, as the worker, the CLI, the statistics writer or another server has. */
    let elsewhere: Store;
    let drop: () => Promise<void>;
    let accountId: number;
    let n = 0;

    before(async () => {
      let url: string;
      ({ store, url, drop } = await dialect.open());
      elsewhere = await openStore(url);
      accountId = await seedAccount(store, "reader", "r".repeat(32), "s".repeat(32), 1);
    });
    after(async () => {
      await elsewhere?.close();
      await drop?.();
    });

    /** A published document, read twice so that the next read could come from memory. */
    async function published(): Promise<{ documentId: string; name: string }> {
      const now = Date.now();
      const ids = newDocumentIds(now);
      const name = `doc-${++n}`;
      const doc = buildNewDocument(
        ids,
        { accountId, username: "reader", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: `Doc ${n}`, slurpUrl: "", originalSize: 10, blobId: newBlobId() },
        { ...OPTIONS, name },
        now,
      );
      await store.documents.insertWithJob(doc, "convert-document");
      await dbOf(store).updateTable("documents").set({ state: "A", pageCount: 3 }).where("documentId", "=", doc.documentId).execute();
      assert.equal((await store.publicPages.documentByAddress("reader", name))?.state, "A");
      assert.equal((await store.publicPages.documentByAddress("reader", name))?.state, "A");
      return { documentId: doc.documentId, name };
    }

    test("a title changed by another connection is read at once", async () => {
      const d = await published();
      await sql`update documents set title = 'Changed elsewhere' where document_id = ${d.documentId}`.execute(dbOf(elsewhere));
      assert.equal((await store.publicPages.documentByAddress("reader", d.name))?.title, "Changed elsewhere");
    });

    test("a document made private through this store is read private at once, by address and by documentId", async () => {
      const d = await published();
      assert.equal((await store.publicPages.documentById("reader", d.documentId))?.access, "public");
      assert.equal((await store.documents.update(accountId, d.documentId, { access: "private", updatedAt: Date.now() })).ok, true);
      assert.equal((await store.publicPages.documentByAddress("reader", d.name))?.access, "private");
      assert.equal((await store.publicPages.documentById("reader", d.documentId))?.access, "private");
    });

    test("a document deleted by another connection is gone at once", async () => {
      const d = await published();
      assert.equal((await elsewhere.documents.deleteByNames(accountId, [d.name])).length, 1);
      assert.equal(await store.publicPages.documentByAddress("reader", d.name), undefined);
    });

    test("an address read while nothing was there finds the document published there since", async () => {
      assert.equal(await store.publicPages.documentByAddress("reader", `doc-${n + 1}`), undefined);
      assert.equal(await store.publicPages.documentByAddress("reader", `doc-${n + 1}`), undefined);
      const d = await published();
      assert.equal((await store.publicPages.documentByAddress("reader", d.name))?.documentId, d.documentId);
    });

    test("a statistics batch written by another connection leaves the record as it was", async () => {
      const d = await published();
      const first = (await store.publicPages.documentByAddress("reader", d.name))!;
      await elsewhere.statistics.record([{ kind: "impressions", documentId: d.documentId, at: Date.now(), count: 3 }]);
      assert.deepEqual(await store.publicPages.documentByAddress("reader", d.name), first);
    });

    test("the record answered is shared by the requests that ask for it, so it cannot be changed", async () => {
      const d = await published();
      const doc = (await store.publicPages.documentByAddress("reader", d.name))!;
      assert.throws(() => Object.assign(doc, { title: "mine" }), TypeError);
      assert.throws(() => (doc.tags as string[]).push("b"), TypeError);
      assert.equal((await store.publicPages.documentByAddress("reader", d.name))?.title, "Doc " + d.name.slice(4));
    });
  });
}
