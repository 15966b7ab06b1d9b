import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import type { Store } from "../../src/store/open-store.ts";
import { openStore } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: ["a", "b"], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

function newDoc(accountId: number, username: string, options: Partial<DocumentOptions> = {}) {
  const now = Date.now();
  return buildNewDocument(
    newDocumentIds(now),
    { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 10, blobId: newBlobId() },
    { ...OPTIONS, ...options },
    now,
  );
}

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`store on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    before(async () => {
      ({ store, url, drop } = await dialect.open());
    });
    after(async () => drop?.());

    test("migrations run again on an existing database without change", async () => {
      const again = await openStore(url);
      assert.equal(await again.accounts.count(), await store.accounts.count());
      await again.close();
    });

    test("accounts: create, duplicate username, several keys, revoke", async () => {
      const created = await store.accounts.createWithKey("alice", "k".repeat(32), "s".repeat(32), 1000);
      assert.ok(created.ok && typeof created.id === "number");
      assert.deepEqual(await store.accounts.createWithKey("alice", "x".repeat(32), "y".repeat(32), 1000), { ok: false, reason: "name-taken" });
      assert.equal(await store.accounts.getKeyOwnerForSigning("x".repeat(32)), undefined, "a refused account leaves no key");
      assert.deepEqual(await store.accounts.addKey("alice", "k2".padEnd(32, "0"), "s2".padEnd(32, "0"), 2000), { ok: true });
      assert.deepEqual(await store.accounts.addKey("nobody", "k3".padEnd(32, "0"), "s3".padEnd(32, "0"), 2000), { ok: false, reason: "not-found" });
      const owner = await store.accounts.getKeyOwnerForSigning("k".repeat(32));
      assert.deepEqual(owner, { accountId: created.ok ? created.id : -1, username: "alice", apiSecret: "s".repeat(32), documentsVersion: 0 });
      const listed = (await store.accounts.list()).find((a) => a.username === "alice");
      assert.deepEqual(listed?.activeKeys, ["k".repeat(32), "k2".padEnd(32, "0")]);
      assert.equal(await store.accounts.revokeKey("k".repeat(32), 3000), true);
      assert.equal(await store.accounts.revokeKey("k".repeat(32), 3000), false, "revoking twice reports nothing revoked");
      assert.equal(await store.accounts.getKeyOwnerForSigning("k".repeat(32)), undefined);
      assert.ok(await store.accounts.getKeyOwnerForSigning("k2".padEnd(32, "0")), "the other key still works");
      assert.equal(await store.accounts.count(), 1);
    });

    test("documents: record and job written together; every field round-trips", async () => {
      const id = (await seedAccount(store, "bob", "b".repeat(32), "t".repeat(32), 1000));
      const doc = newDoc(id, "bob", { title: "Größe 日本", tags: ["x", "y z"], access: "private", publishDate: 1250685296000 });
      await store.documents.insertWithJob(doc, "convert-document");
      assert.deepEqual(await store.documents.getById(id, doc.documentId), doc);
      const jobs = await dbOf(store).selectFrom("jobs").selectAll().where("documentId", "=", doc.documentId).execute();
      assert.equal(jobs.length, 1);
      assert.equal(jobs[0]!.state, "queued");
      assert.equal(jobs[0]!.kind, "convert-document");
      assert.equal(typeof jobs[0]!.runAt, "number", "bigint columns come back as numbers");
    });

    test("documents: a failing insert leaves neither record nor job", async () => {
      const id = (await seedAccount(store, "carol", "c".repeat(32), "u".repeat(32), 1000));
      const first = newDoc(id, "carol", { name: "same-name" });
      await store.documents.insertWithJob(first, "convert-document");
      const second = newDoc(id, "carol", { name: "same-name" });
      assert.deepEqual(await store.documents.insertWithJob(second, "convert-document"), { ok: false, reason: "name-taken" });
      assert.equal(await store.documents.getById(id, second.documentId), undefined);
      const jobs = await dbOf(store).selectFrom("jobs").select("id").where("documentId", "=", second.documentId).execute();
      assert.equal(jobs.length, 0);
    });

    test("documents: names are unique per account, not across accounts; reads are per account", async () => {
      const a = (await seedAccount(store, "dave", "d".repeat(32), "v".repeat(32), 1000));
      const b = (await seedAccount(store, "erin", "e".repeat(32), "w".repeat(32), 1000));
      const docA = newDoc(a, "dave", { name: "shared" });
      await store.documents.insertWithJob(docA, "convert-document");
      await store.documents.insertWithJob(newDoc(b, "erin", { name: "shared" }), "convert-document");
      assert.equal(await store.documents.isNameTaken(a, "shared"), true);
      assert.equal(await store.documents.isNameTaken(a, "other"), false);
      assert.equal(await store.documents.getById(b, docA.documentId), undefined, "another account's id behaves as absent");
    });

    test("folders: ownership is per account", async () => {
      const a = (await seedAccount(store, "fred", "f".repeat(32), "x".repeat(32), 1000));
      const b = (await seedAccount(store, "gina", "g".repeat(32), "y".repeat(32), 1000));
      const folderId = "0b6a7f3e-7a51-4d1c-9d2e-0f0f0f0f0f0f";
      await dbOf(store).insertInto("folders").values({ folderId, accountId: a, name: "f", description: "", createdAt: 1, updatedAt: 1 }).execute();
      assert.equal(await store.folders.ownsAll(a, [folderId]), true);
      assert.equal(await store.folders.ownsAll(b, [folderId]), false);
      assert.equal(await store.folders.ownsAll(a, [folderId, "00000000-0000-0000-0000-000000000000"]), false);
    });
  });
}
