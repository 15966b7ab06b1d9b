import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: "desc", downloadable: false, infoLink: "",
  language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
  publishDate: undefined, folderIds: [],
};

/** The store code of issue 26 item 9 (the app's rough edges) on both databases. */
for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`the app's store queries on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let alice: number;
    let bob: number;
    let clock = 10_000;
    before(async () => {
      ({ store, drop } = await dialect.open());
      const id = (r: Awaited<ReturnType<Store["accounts"]["createWithKey"]>>) => {
        assert.ok(r.ok);
        return r.id;
      };
      alice = id(await store.accounts.createWithKey("alice", "a".repeat(32), "s".repeat(32), 1000));
      bob = id(await store.accounts.createWithKey("bob", "b".repeat(32), "s".repeat(32), 1000));
    });
    after(async () => drop?.());

    const newDoc = async (accountId: number, username: string, title: string, extra: Partial<DocumentOptions> = {}) => {
      const now = (clock += 1000);
      const doc = buildNewDocument(
        newDocumentIds(now),
        { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: title, slurpUrl: "", originalSize: 1, blobId: newBlobId() },
        { ...OPTIONS, ...extra },
        now,
      );
      await store.documents.insertWithJob(doc, "convert-document");
      return doc;
    };
    const activate = (id: string) => store.documents.markActive(id, { pageCount: 2, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, clock);

    test("retryFailed: F -> P with one new job, only for the owner, only once", async () => {
      const doc = await newDoc(alice, "alice", "Fails");
      assert.equal(await store.documents.retryFailed(alice, doc.documentId, clock), false, "not failed yet");
      await store.documents.markFailed(doc.documentId, 3, "damaged", clock);
      assert.equal(await store.documents.retryFailed(bob, doc.documentId, clock), false, "another account's");
      assert.equal(await store.documents.retryFailed(alice, doc.documentId, clock), true);
      assert.equal(await store.documents.retryFailed(alice, doc.documentId, clock), false, "a second press");
      const after = await store.documents.getById(alice, doc.documentId);
      assert.equal(after?.state, "P");
      assert.equal(after?.errorMessage, "");
      assert.equal((await store.jobs.getForDocument(doc.documentId)).filter((j) => j.kind === "convert-document").length, 1);
    });

    test("recentOf, the list's folder filter, foldersOfDocument and setDocumentFolders keep to the account", async () => {
      const since = clock;
      const a = await newDoc(alice, "alice", "A one");
      const b = await newDoc(alice, "alice", "A two");
      await newDoc(bob, "bob", "B one");
      assert.deepEqual((await store.documents.recentOf(alice, since, 10)).map((d) => d.documentId), [b.documentId, a.documentId]);
      assert.equal((await store.documents.recentOf(alice, since, 1)).length, 1);
      await activate(a.documentId);
      const f = await store.folders.create(alice, "00000000-0000-4000-8000-0000000000f1", { name: "F", description: "" }, clock);
      const g = await store.folders.create(alice, "00000000-0000-4000-8000-0000000000f2", { name: "G", description: "" }, clock);
      assert.ok(f.ok && g.ok);
      const target = (await store.bookmarks.findBookmarkable(alice, "alice", a.documentId))!;
      let n = 0;
      const ids = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
      await store.bookmarks.setDocumentFolders(alice, target, [f.folder.folderId, g.folder.folderId], ids, clock);
      assert.deepEqual((await store.bookmarks.foldersOfDocument(alice, a.documentId)).sort(), [f.folder.folderId, g.folder.folderId]);
      assert.deepEqual(await store.bookmarks.foldersOfDocument(bob, a.documentId), []);
      const listed = await store.documents.list({ accountId: alice, folderId: f.folder.folderId, sortBy: "publishDate", order: "desc", startIndex: 0, pageSize: 10 });
      assert.deepEqual(listed.records.map((d) => d.documentId), [a.documentId]);
      assert.equal((await store.documents.list({ accountId: bob, folderId: f.folder.folderId, sortBy: "publishDate", order: "desc", startIndex: 0, pageSize: 10 })).totalCount, 0);
      // Out of one: the bookmark stays for the other; out of both: it goes.
      await store.bookmarks.setDocumentFolders(alice, target, [g.folder.folderId], ids, clock);
      assert.deepEqual(await store.bookmarks.foldersOfDocument(alice, a.documentId), [g.folder.folderId]);
      await store.bookmarks.setDocumentFolders(alice, target, [], ids, clock);
      assert.deepEqual(await store.bookmarks.foldersOfDocument(alice, a.documentId), []);
      assert.equal((await store.bookmarks.listPage(alice, { scope: { kind: "all" }, sortBy: "created", order: "asc", startIndex: 0, pageSize: 10 })).totalCount, 0);
    });

    test("upload checksums: the earliest of the account's own, never another's; gone with the document", async () => {
      const one = await newDoc(alice, "alice", "First copy");
      const two = await newDoc(alice, "alice", "Second copy");
      const theirs = await newDoc(bob, "bob", "Their copy");
      await store.uploadChecksums.record(bob, theirs.documentId, "c".repeat(64));
      assert.equal(await store.uploadChecksums.earlierOf(alice, "c".repeat(64), one.documentId), undefined);
      await store.uploadChecksums.record(alice, one.documentId, "c".repeat(64));
      await store.uploadChecksums.record(alice, two.documentId, "c".repeat(64));
      assert.deepEqual(await store.uploadChecksums.earlierOf(alice, "c".repeat(64), two.documentId), { documentId: one.documentId, title: "First copy" });
      await store.documents.deleteByNames(alice, [one.documentId]);
      assert.equal(await store.uploadChecksums.earlierOf(alice, "c".repeat(64), two.documentId), undefined);
    });

    test("key names, replacePasswordHash, recentPublic without explicit or private documents", async () => {
      await store.accounts.addKeyTo(alice, "k".repeat(32), "s".repeat(32), clock, "Nightly");
      assert.equal((await store.accounts.keysOf(alice)).find((k) => k.apiKey === "k".repeat(32))?.label, "Nightly");
      await store.accounts.setPasswordHash("alice", "scrypt$old");
      assert.equal(await store.accounts.replacePasswordHash(alice, "scrypt$other", "scrypt$new"), false);
      assert.equal(await store.accounts.replacePasswordHash(alice, "scrypt$old", "scrypt$new"), true);
      assert.equal((await store.accounts.signInRecord("alice"))?.passwordHash, "scrypt$new");
      const shown = await newDoc(alice, "alice", "Shown on the home page");
      const explicit = await newDoc(alice, "alice", "Explicit", { explicit: true });
      const hidden = await newDoc(bob, "bob", "Private", { access: "private" });
      for (const d of [shown, explicit, hidden]) await activate(d.documentId);
      const recent = (await store.publicPages.recentPublic(50)).map((d) => d.documentId);
      assert.ok(recent.includes(shown.documentId));
      assert.ok(!recent.includes(explicit.documentId) && !recent.includes(hidden.documentId));
    });
  });
}
