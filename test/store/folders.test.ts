import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import { sql } from "kysely";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: "desc", downloadable: false, infoLink: "",
  language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
  publishDate: undefined, folderIds: [],
};

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`folders and bookmarks store on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    let alice: number;
    let bob: number;
    before(async () => {
      ({ store, url, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1000));
      bob = (await seedAccount(store, "bob", "b".repeat(32), "s".repeat(32), 1000));
    });
    after(async () => drop?.());

    const newDoc = async (accountId: number, username: string, name: string) => {
      const now = Date.now();
      const doc = buildNewDocument(
        newDocumentIds(now),
        { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: `T ${name}`, slurpUrl: "", originalSize: 1, blobId: newBlobId() },
        { ...OPTIONS, name },
        now,
      );
      await store.documents.insertWithJob(doc, "convert-document");
      return doc;
    };
    const activate = (id: string) =>
      store.documents.markActive(id, { pageCount: 2, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, Date.now());

    test("folders: create, taken names per account, update, list order by code point, delete", async () => {
      const a = await store.folders.create(alice, "00000000-0000-4000-8000-00000000000a", { name: "b", description: "" }, 1000);
      assert.ok(a.ok);
      assert.deepEqual(a.folder, { folderId: "00000000-0000-4000-8000-00000000000a", accountId: alice, username: "alice", name: "b", description: "", items: 0, createdAt: 1000, updatedAt: 1000, onProfile: false });
      assert.deepEqual(await store.folders.create(alice, "00000000-0000-4000-8000-00000000000b", { name: "b", description: "" }, 1000), { ok: false, reason: "name-taken" });
      assert.ok((await store.folders.create(bob, "00000000-0000-4000-8000-00000000000c", { name: "b", description: "" }, 1000)).ok);
      assert.ok((await store.folders.create(alice, "00000000-0000-4000-8000-00000000000d", { name: "B", description: "" }, 2000)).ok);
      assert.ok((await store.folders.create(alice, "00000000-0000-4000-8000-00000000000e", { name: "\u00e9", description: "" }, 2000)).ok);
      const page = await store.folders.listPage(alice, { sortBy: "name", order: "asc", startIndex: 0, pageSize: 10 });
      assert.deepEqual(page.items.map((f) => f.name), ["B", "b", "\u00e9"]);
      assert.equal(page.totalCount, 3);
      const byCreated = await store.folders.listPage(alice, { sortBy: "created", order: "desc", startIndex: 1, pageSize: 1 });
      assert.deepEqual(byCreated.items.map((f) => f.name), ["B"], "ties broken by id in the same direction");
      assert.deepEqual(await store.folders.update(alice, "00000000-0000-4000-8000-00000000000a", { name: "B", description: undefined }, 3000), { ok: false, reason: "name-taken" });
      assert.deepEqual(await store.folders.update(bob, "00000000-0000-4000-8000-00000000000a", { name: "x", description: undefined }, 3000), { ok: false, reason: "not-found" });
      const u = await store.folders.update(alice, "00000000-0000-4000-8000-00000000000a", { name: undefined, description: "d" }, 3000);
      assert.ok(u.ok);
      assert.deepEqual([u.folder.name, u.folder.description, u.folder.updatedAt], ["b", "d", 3000]);
      assert.equal(await store.folders.ownsAll(alice, ["00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000c"]), false);
      assert.equal(await store.folders.deleteMany(alice, ["00000000-0000-4000-8000-00000000000c", "nope"]), 0, "another account's folder stays");
      assert.equal(await store.folders.deleteMany(alice, ["00000000-0000-4000-8000-00000000000e"]), 1);
      assert.equal((await store.folders.listPage(alice, { sortBy: "name", order: "asc", startIndex: 0, pageSize: 0 })).totalCount, 2);
    });

    test("bookmarks: addForActivatedDocument in the P -> A transaction, skipping folders deleted meanwhile", async () => {
      const f1 = "10000000-0000-4000-8000-000000000001";
      const f2 = "10000000-0000-4000-8000-000000000002";
      for (const id of [f1, f2]) assert.ok((await store.folders.create(alice, id, { name: id, description: "" }, 1000)).ok);
      const doc = await newDoc(alice, "alice", "upload-with-folders");
      await store.folders.deleteMany(alice, [f2]);
      const bookmarkId = await dbOf(store).transaction().execute((trx) =>
        store.bookmarks.addForActivatedDocument(trx, { documentId: doc.documentId, accountId: alice, title: "T", description: "D" }, [f2, f1, "10000000-0000-4000-8000-00000000000c"], 5000),
      );
      assert.ok(bookmarkId);
      const b = await store.bookmarks.get(alice, bookmarkId);
      assert.deepEqual(
        { ...b, bookmarkId: "" },
        { bookmarkId: "", accountId: alice, username: "alice", documentId: doc.documentId, documentUsername: "alice", name: "upload-with-folders", title: "T", description: "D", page: 1, createdAt: 5000, updatedAt: 5000, folderIds: [f1], documentState: "P", documentPageCount: 0 },
      );
      // still processing: not in the folder's listing nor its count
      const inF1 = () => store.bookmarks.listPage(alice, { scope: { kind: "folder", folderId: f1 }, sortBy: "created", order: "asc", startIndex: 0, pageSize: 10 });
      assert.equal((await inF1()).totalCount, 0);
      assert.equal((await store.folders.get(alice, f1))!.items, 0);
      assert.ok(await activate(doc.documentId));
      assert.deepEqual((await inF1()).items.map((x) => x.bookmarkId), [bookmarkId]);
      assert.equal((await store.folders.get(alice, f1))!.items, 1);
      // no folder left: no bookmark
      const none = await dbOf(store).transaction().execute((trx) =>
        store.bookmarks.addForActivatedDocument(trx, { documentId: doc.documentId, accountId: alice, title: "T", description: "D" }, [f2], 6000),
      );
      assert.equal(none, undefined);
      // a rolled-back transaction leaves nothing
      await assert.rejects(
        dbOf(store).transaction().execute(async (trx) => {
          await store.bookmarks.addForActivatedDocument(trx, { documentId: doc.documentId, accountId: alice, title: "T", description: "D" }, [f1], 7000);
          throw new Error("rollback");
        }),
      );
      assert.equal((await store.bookmarks.listPage(alice, { scope: { kind: "all" }, sortBy: "created", order: "asc", startIndex: 0, pageSize: 10 })).totalCount, 1);
    });

    test("bookmarks: visibility of other accounts' documents, scopes, update, delete", async () => {
      const pub = await newDoc(bob, "bob", "bob-public");
      await activate(pub.documentId);
      const priv = await newDoc(bob, "bob", "bob-private");
      assert.equal(await store.bookmarks.findBookmarkable(alice, "bob", "bob-private"), undefined, "another account's processing document");
      await activate(priv.documentId);
      await dbOf(store).updateTable("documents").set({ access: "private" }).where("documentId", "=", priv.documentId).execute();
      assert.equal(await store.bookmarks.findBookmarkable(alice, "bob", "bob-private"), undefined);
      assert.ok(await store.bookmarks.findBookmarkable(bob, "bob", "bob-private"), "its owner sees it");
      const target = (await store.bookmarks.findBookmarkable(alice, "bob", "bob-public"))!;
      assert.equal(target.pageCount, 2);
      const b = await store.bookmarks.add(alice, "20000000-0000-4000-8000-000000000001", target, 2, [], 8000);
      assert.deepEqual([b.documentUsername, b.page, b.folderIds], ["bob", 2, []]);
      const unfiled = await store.bookmarks.listPage(alice, { scope: { kind: "unfiled" }, sortBy: "page", order: "desc", startIndex: 0, pageSize: 10 });
      assert.deepEqual(unfiled.items.map((x) => x.bookmarkId), [b.bookmarkId]);
      assert.equal(await store.bookmarks.update(bob, b.bookmarkId, { title: "x", description: undefined, page: undefined }, 9000), undefined);
      const u = (await store.bookmarks.update(alice, b.bookmarkId, { title: "x", description: undefined, page: 1 }, 9000))!;
      assert.deepEqual([u.title, u.description, u.page, u.updatedAt], ["x", "desc", 1, 9000]);
      // the document turns private: the bookmark is no longer shown
      await dbOf(store).updateTable("documents").set({ access: "private" }).where("documentId", "=", pub.documentId).execute();
      assert.equal(await store.bookmarks.get(alice, b.bookmarkId), undefined);
      await dbOf(store).updateTable("documents").set({ access: "public" }).where("documentId", "=", pub.documentId).execute();
      assert.equal(await store.bookmarks.deleteMany(bob, [b.bookmarkId]), 0);
      assert.equal(await store.bookmarks.deleteMany(alice, [b.bookmarkId, "nope"]), 1);
      assert.equal(await store.bookmarks.get(alice, b.bookmarkId), undefined);
    });

    test("folders on the profile (issue 26 item 9): hidden by default, only public active documents, only the owner's folder", async () => {
      const shown = "30000000-0000-4000-8000-000000000001";
      const hidden = "30000000-0000-4000-8000-000000000002";
      const bobs = "30000000-0000-4000-8000-000000000003";
      for (const id of [shown, hidden]) assert.ok((await store.folders.create(alice, id, { name: `p ${id}`, description: "d" }, 1000)).ok);
      assert.ok((await store.folders.create(bob, bobs, { name: "bob's", description: "" }, 1000)).ok);
      assert.deepEqual(await store.folders.shownOnProfile(alice), [], "a new folder is not shown");
      assert.equal((await store.folders.get(alice, shown))?.onProfile, false);
      assert.equal(await store.folders.setOnProfile(alice, bobs, true), false, "another account's folder");
      assert.equal((await store.folders.get(bob, bobs))?.onProfile, false);
      assert.equal(await store.folders.setOnProfile(alice, shown, true), true);
      assert.equal(await store.folders.setOnProfile(bob, bobs, true), true);
      assert.equal((await store.folders.get(alice, shown))?.onProfile, true);

      const pub = await newDoc(alice, "alice", "prof-public");
      await activate(pub.documentId);
      const priv = await newDoc(alice, "alice", "prof-private");
      await activate(priv.documentId);
      await dbOf(store).updateTable("documents").set({ access: "private" }).where("documentId", "=", priv.documentId).execute();
      const processing = await newDoc(alice, "alice", "prof-processing");
      const draft = await newDoc(alice, "alice", "prof-draft");
      await activate(draft.documentId);
      await dbOf(store).updateTable("documents").set({ draft: 1 }).where("documentId", "=", draft.documentId).execute();
      const bobPub = await newDoc(bob, "bob", "prof-bob");
      await activate(bobPub.documentId);
      let n = 0;
      for (const d of [pub, priv, processing, draft, bobPub]) {
        // Placed directly: the store keeps what a listing may show, whatever the API let in.
        const target = { documentId: d.documentId, accountId: d.accountId, title: d.title, description: d.description, state: "A", pageCount: 1 };
        await store.bookmarks.add(alice, `40000000-0000-4000-8000-00000000000${n++}`, target, 1, [shown, hidden], 20_000 + n);
      }
      // Bob's bookmark of alice's public document in his own folder does not count in hers.
      await store.bookmarks.add(bob, "40000000-0000-4000-8000-0000000000b0", (await store.bookmarks.findBookmarkable(bob, "alice", pub.name!))!, 1, [bobs], 30_000);

      assert.deepEqual(await store.folders.shownOnProfile(alice), [{ folderId: shown, name: `p ${shown}`, description: "d", publicItems: 2 }]);
      assert.equal(await store.folders.publicFolder(alice, hidden), undefined, "a hidden folder");
      assert.equal(await store.folders.publicFolder(alice, bobs), undefined, "another account's folder under alice");
      assert.equal((await store.folders.publicFolder(bob, bobs))?.publicItems, 1);
      const docs = await store.folders.publicDocuments(shown, 0, 10);
      assert.equal(docs.totalCount, 2);
      assert.deepEqual(docs.records.map((d) => [d.username, d.documentId]), [["bob", bobPub.documentId], ["alice", pub.documentId]], "newest placement first, never private, processing or draft");
      assert.deepEqual((await store.folders.publicDocuments(shown, 1, 1)).records.map((d) => d.documentId), [pub.documentId]);
      // v2's accessType is the same choice.
      const types = await store.documentV2.stackAccessTypes(alice);
      assert.deepEqual([types.get(shown), types.get(hidden)], ["PUBLIC", "UNLISTED"]);
      await store.documentV2.setStackAccessType(alice, hidden, "PUBLIC");
      assert.equal((await store.folders.get(alice, hidden))?.onProfile, true);
      await store.documentV2.setStackAccessType(alice, hidden, "UNLISTED");
      assert.equal((await store.folders.get(alice, hidden))?.onProfile, false);
    });

    test("migration 0019 runs again without touching a publisher's choice", async () => {
      const id = "30000000-0000-4000-8000-000000000009";
      assert.ok((await store.folders.create(alice, id, { name: "kept shown", description: "" }, 1000)).ok);
      assert.equal(await store.folders.setOnProfile(alice, id, true), true);
      await sql`delete from kysely_migration where name = '0019_folders_on_profile'`.execute(dbOf(store));
      const again = await openStore(url);
      try {
        assert.equal((await again.folders.get(alice, id))?.onProfile, true);
      } finally {
        await again.close();
      }
    });
  });
}
