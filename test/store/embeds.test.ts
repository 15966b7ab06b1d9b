import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

async function insertDoc(store: Store, accountId: number, username: string): Promise<string> {
  const now = Date.now();
  const doc = buildNewDocument(
    newDocumentIds(now),
    { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 10, blobId: newBlobId() },
    OPTIONS,
    now,
  );
  await store.documents.insertWithJob(doc, "convert-document");
  return doc.documentId;
}

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`embeds store on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let alice: number;
    let bob: number;
    let docA: string;
    let docB: string;
    before(async () => {
      ({ store, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      bob = (await seedAccount(store, "bob", "b".repeat(32), "t".repeat(32), 1));
      docA = await insertDoc(store, alice, "alice");
      docB = await insertDoc(store, alice, "alice");
    });
    after(async () => drop?.());

    test("insert answers the record with its id; get, update and delete are scoped to the account", async () => {
      const e = await store.embeds.insert({ accountId: alice, documentId: docA, readerStartPage: 1, width: 525, height: 340, createdAt: 1000 });
      assert.equal(typeof e.id, "number");
      assert.deepEqual(e, { id: e.id, accountId: alice, documentId: docA, readerStartPage: 1, width: 525, height: 340, createdAt: 1000, updatedAt: 1000 });
      assert.deepEqual(await store.embeds.get(alice, e.id), e);
      assert.equal(await store.embeds.get(bob, e.id), undefined);
      assert.equal(await store.embeds.get(alice, 2 ** 40), undefined, "an id beyond the column names nothing");
      assert.equal(await store.embeds.get(alice, 0), undefined);
      assert.equal(await store.embeds.update(bob, e.id, { width: 1 }, 2000), undefined);
      const u = await store.embeds.update(alice, e.id, { width: 800, documentId: docB }, 2000);
      assert.deepEqual(u, { ...e, width: 800, documentId: docB, updatedAt: 2000 });
      assert.equal(await store.embeds.delete(bob, e.id), false);
      assert.equal(await store.embeds.delete(alice, 2 ** 40), false);
      assert.equal(await store.embeds.delete(alice, e.id), true);
      assert.equal(await store.embeds.delete(alice, e.id), false);
      assert.equal(await store.embeds.get(alice, e.id), undefined);
    });

    test("list: filter, stable sort both ways, paging, count", async () => {
      const made = [];
      for (const [doc, width, createdAt] of [[docA, 300, 5], [docB, 100, 5], [docA, 200, 4], [docB, 100, 6]] as const) {
        made.push(await store.embeds.insert({ accountId: alice, documentId: doc, readerStartPage: 1, width, height: 10, createdAt }));
      }
      await store.embeds.insert({ accountId: bob, documentId: docA, readerStartPage: 1, width: 1, height: 1, createdAt: 1 });
      const ids = made.map((m) => m.id);
      const q = { documentId: undefined, sortBy: "id" as const, order: "asc" as const, startIndex: 0, pageSize: 10 };
      const all = await store.embeds.list(alice, q);
      assert.equal(all.totalCount, 4);
      assert.deepEqual(all.items.map((i) => i.id), ids);
      const byWidth = await store.embeds.list(alice, { ...q, sortBy: "width" });
      assert.deepEqual(byWidth.items.map((i) => i.id), [ids[1], ids[3], ids[2], ids[0]], "ties by id");
      const byWidthDesc = await store.embeds.list(alice, { ...q, sortBy: "width", order: "desc" });
      assert.deepEqual(byWidthDesc.items.map((i) => i.id), [ids[0], ids[2], ids[3], ids[1]]);
      const byCreated = await store.embeds.list(alice, { ...q, sortBy: "created" });
      assert.deepEqual(byCreated.items.map((i) => i.id), [ids[2], ids[0], ids[1], ids[3]]);
      const ofA = await store.embeds.list(alice, { ...q, documentId: docA });
      assert.deepEqual(ofA.items.map((i) => i.id), [ids[0], ids[2]]);
      assert.equal(ofA.totalCount, 2);
      const page = await store.embeds.list(alice, { ...q, startIndex: 1, pageSize: 2 });
      assert.deepEqual(page, { totalCount: 4, items: [made[1], made[2]] });
      assert.deepEqual(await store.embeds.list(alice, { ...q, pageSize: 0 }), { totalCount: 4, items: [] });
      assert.deepEqual(await store.embeds.list(alice, { ...q, startIndex: 4 }), { totalCount: 4, items: [] });
      assert.deepEqual(await store.embeds.list(alice, { ...q, documentId: "nope" }), { totalCount: 0, items: [] });
    });

    test("deleting a document deletes its embeds", async () => {
      const doc = await insertDoc(store, alice, "alice");
      const e = await store.embeds.insert({ accountId: alice, documentId: doc, readerStartPage: 1, width: 1, height: 1, createdAt: 1 });
      await dbOf(store).deleteFrom("jobs").where("documentId", "=", doc).execute();
      await dbOf(store).deleteFrom("documents").where("documentId", "=", doc).execute();
      assert.equal(await store.embeds.get(alice, e.id), undefined);
    });
  });
}
