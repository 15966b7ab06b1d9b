import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions, type DocumentRecord } from "../../src/domain/document.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * A write that collides on a unique name is answered as an outcome, the same on SQLite and
 * PostgreSQL: no caller outside src/store/ reads a driver's error codes (issue 13, item 3).
 */

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "",
  language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
  publishDate: undefined, folderIds: [],
};

function newDoc(accountId: number, name: string | undefined): DocumentRecord {
  const now = Date.now();
  return buildNewDocument(
    newDocumentIds(now),
    { accountId, username: "alice", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "Title", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    { ...OPTIONS, name },
    now,
  );
}

const RESULT = { pageCount: 1, coverWidth: 1, coverHeight: 1, description: undefined };

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`store write outcomes on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let alice: number;
    let bob: number;
    before(async () => {
      ({ store, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      bob = (await seedAccount(store, "bob", "b".repeat(32), "s".repeat(32), 1));
    });
    after(async () => drop?.());

    test("insertWithJob: a name taken is an outcome, and leaves neither record nor job", async () => {
      const first = newDoc(alice, "report");
      assert.deepEqual(await store.documents.insertWithJob(first, "convert-document"), { ok: true });
      const second = newDoc(alice, "report");
      assert.deepEqual(await store.documents.insertWithJob(second, "convert-document"), { ok: false, reason: "name-taken" });
      assert.equal(await store.documents.getForConversion(second.documentId), undefined);
      assert.deepEqual(await store.jobs.getForDocument(second.documentId), [], "no job for the refused document");
      assert.deepEqual(await store.documents.insertWithJob(newDoc(bob, "report"), "convert-document"), { ok: true }, "names are per account");
    });

    test("update: ok, not found (gone or another account's), name taken", async () => {
      const doc = newDoc(alice, "draft");
      await store.documents.insertWithJob(doc, "convert-document");
      assert.deepEqual(await store.documents.update(alice, doc.documentId, { name: "final", nameGiven: 1, updatedAt: 2 }), { ok: true });
      assert.deepEqual(await store.documents.update(alice, doc.documentId, { name: "report", updatedAt: 3 }), { ok: false, reason: "name-taken" });
      assert.equal((await store.documents.getById(alice, doc.documentId))!.name, "final", "a refused update changes nothing");
      assert.deepEqual(await store.documents.update(bob, doc.documentId, { title: "x", updatedAt: 4 }), { ok: false, reason: "not-found" });
      assert.deepEqual(await store.documents.update(alice, "no-such-document", { title: "x", updatedAt: 4 }), { ok: false, reason: "not-found" });
    });

    test("markActive: a title-made name another document took meanwhile publishes under the documentId", async () => {
      const doc = newDoc(alice, undefined);
      await store.documents.insertWithJob(doc, "convert-document");
      assert.equal(await store.documents.markActive(doc.documentId, { ...RESULT, name: "report" }, 5), true);
      const after = (await store.documents.getById(alice, doc.documentId))!;
      assert.deepEqual([after.state, after.name], ["A", doc.documentId]);
      assert.equal(await store.documents.markActive(doc.documentId, { ...RESULT, name: "free-name" }, 6), false, "only from P");
    });

    test("folders: a name taken on create and on update is an outcome", async () => {
      const made = await store.folders.create(alice, "00000000-0000-4000-8000-000000000001", { name: "shelf", description: "" }, 1);
      assert.ok(made.ok);
      assert.deepEqual(await store.folders.create(alice, "00000000-0000-4000-8000-000000000002", { name: "shelf", description: "" }, 1), { ok: false, reason: "name-taken" });
      const other = await store.folders.create(alice, "00000000-0000-4000-8000-000000000003", { name: "other", description: "" }, 1);
      assert.ok(other.ok);
      assert.deepEqual(await store.folders.update(alice, other.folder.folderId, { name: "shelf", description: undefined }, 2), { ok: false, reason: "name-taken" });
    });
  });
}
