import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { type DocumentListQuery } from "../../src/store/documents.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { newStoreDoc } from "../helpers/search-docs.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/** The account-operation queries of the documents repo, on SQLite and PostgreSQL alike. */

const pgSkip = await postgresUnavailable();


const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`documents list/update/delete on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let alice: number;
    let bob: number;
    const docs: DocumentRecord[] = [];
    const TITLES = ["b", "a", "B", "A", "é", "e", "Z", "a", "ä", "b"];

    const q = (over: Partial<DocumentListQuery> = {}): DocumentListQuery => ({
      accountId: alice, sortBy: "publishDate", order: "asc", startIndex: 0, pageSize: 100, ...over,
    });

    before(async () => {
      ({ store, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      bob = (await seedAccount(store, "bob", "b".repeat(32), "s".repeat(32), 1));
      for (let i = 0; i < TITLES.length; i++) {
        const d = newStoreDoc(alice, "alice", {
          name: `n-${i}`, title: TITLES[i]!, pageCount: i % 3, publishDate: 1000 * (i % 4), updatedAt: 5000 + 1000 * (i % 2),
          state: (["A", "P", "F"] as const)[i % 3]!, orgDocType: i % 2 ? "unknown" : "pdf", description: i % 2 ? "x" : "",
        });
        docs.push(d);
        await store.documents.insertWithJob(d, "convert-document");
      }
      await store.documents.insertWithJob(newStoreDoc(bob, "bob", { name: "n-0", title: "a" }), "convert-document");
    });
    after(async () => drop?.());

    test("sorts text in code point order, ties by documentId in the same direction", async () => {
      for (const order of ["asc", "desc"] as const) {
        const want = [...docs]
          .sort((a, b) => (order === "asc" ? 1 : -1) * (cmp(a.title, b.title) || cmp(a.documentId, b.documentId)))
          .map((d) => d.documentId);
        const { totalCount, records } = await store.documents.list(q({ sortBy: "title", order }));
        assert.equal(totalCount, 10);
        assert.deepEqual(records.map((r) => r.documentId), want);
      }
    });

    test("sorts numbers, ties by documentId; ep is updatedAt", async () => {
      for (const [sortBy, value] of [["pageCount", (d: DocumentRecord) => d.pageCount], ["publishDate", (d: DocumentRecord) => d.publishDate], ["ep", (d: DocumentRecord) => d.updatedAt]] as const) {
        for (const order of ["asc", "desc"] as const) {
          const want = [...docs]
            .sort((a, b) => (order === "asc" ? 1 : -1) * (value(a) - value(b) || cmp(a.documentId, b.documentId)))
            .map((d) => d.documentId);
          const { records } = await store.documents.list(q({ sortBy, order }));
          assert.deepEqual(records.map((r) => r.documentId), want, `${sortBy} ${order}`);
        }
      }
    });

    test("filters, count of all matches, offset and limit in SQL", async () => {
      const page = await store.documents.list(q({ states: ["A", "F"], orgDocTypes: ["pdf"], startIndex: 1, pageSize: 2 }));
      const all = docs.filter((d) => d.state !== "P" && d.orgDocType === "pdf");
      assert.equal(page.totalCount, all.length);
      assert.deepEqual(
        page.records.map((r) => r.documentId),
        all.sort((a, b) => a.publishDate - b.publishDate || cmp(a.documentId, b.documentId)).slice(1, 3).map((d) => d.documentId),
      );
      assert.equal((await store.documents.list(q({ pageSize: 0 }))).records.length, 0);
      assert.equal((await store.documents.list(q({ pageSize: 0 }))).totalCount, 10);
      assert.equal((await store.documents.list(q({ startIndex: 50 }))).totalCount, 10);
      assert.equal((await store.documents.list(q({ orgDocName: "a.pdf", access: "public", origins: ["apiupload"] }))).totalCount, 10);
      assert.equal((await store.documents.list(q({ access: "private" }))).totalCount, 0);
      assert.equal((await store.documents.list(q({ accountId: bob }))).totalCount, 1);
    });

    test("getByName and update stay within the account", async () => {
      const d = (await store.documents.getByName(alice, "n-1"))!;
      assert.equal(d.documentId, docs[1]!.documentId);
      assert.deepEqual(await store.documents.update(bob, d.documentId, { title: "stolen", updatedAt: 1 }), { ok: false, reason: "not-found" });
      assert.deepEqual(await store.documents.update(alice, d.documentId, { title: "new", tags: '["t"]', name: "renamed", nameGiven: 1, updatedAt: 9000 }), { ok: true });
      const after = (await store.documents.getById(alice, d.documentId))!;
      assert.deepEqual([after.title, after.tags, after.name, after.nameGiven, after.updatedAt], ["new", ["t"], "renamed", true, 9000]);
      assert.equal(await store.documents.getByName(alice, "n-1"), undefined);
      assert.deepEqual(await store.documents.update(alice, d.documentId, { name: "n-2", updatedAt: 9001 }), { ok: false, reason: "name-taken" }, "the name is unique per account");
    });

    test("markActive keeps a name and description the caller set meanwhile", async () => {
      const d = newStoreDoc(alice, "alice", { name: "pending", nameGiven: false, descriptionGiven: false, state: "P" });
      await store.documents.insertWithJob(d, "convert-document");
      await store.documents.update(alice, d.documentId, { name: "chosen", nameGiven: 1, description: "mine", descriptionGiven: 1, updatedAt: 1 });
      assert.equal(await store.documents.markActive(d.documentId, { pageCount: 2, coverWidth: 1, coverHeight: 1, description: "auto", name: "from-title" }, 2), true);
      const after = (await store.documents.getById(alice, d.documentId))!;
      assert.deepEqual([after.name, after.description, after.state], ["chosen", "mine", "A"]);
      const e = newStoreDoc(alice, "alice", { name: e2(), state: "P" });
      await store.documents.insertWithJob(e, "convert-document");
      await store.documents.markActive(e.documentId, { pageCount: 2, coverWidth: 1, coverHeight: 1, description: "auto", name: "from-title" }, 2);
      const e3 = (await store.documents.getById(alice, e.documentId))!;
      assert.deepEqual([e3.name, e3.description], ["from-title", "auto"], "a name and description not given are still filled in");
      await store.documents.deleteByNames(alice, ["chosen", "from-title"]);
    });

    test("deleteByNames: own documents with their jobs, bookmarks and embeds; others passed over", async () => {
      const target = docs[3]!;
      const now = Date.now();
      await dbOf(store).insertInto("bookmarks").values({ bookmarkId: "00000000-0000-4000-8000-000000000001", accountId: bob, documentId: target.documentId, title: "", description: "", page: 1, createdAt: now, updatedAt: now }).execute();
      await dbOf(store).insertInto("embeds").values({ accountId: alice, documentId: target.documentId, readerStartPage: 1, width: 1, height: 1, createdAt: now, updatedAt: now }).execute();
      const removed = await store.documents.deleteByNames(alice, ["n-3", "n-0", "missing", "n-3"]);
      assert.deepEqual(new Set(removed.map((r) => r.documentId)), new Set([target.documentId, docs[0]!.documentId]));
      assert.deepEqual(new Set(removed.map((r) => r.blobId)), new Set([target.blobId, docs[0]!.blobId]));
      for (const id of [target.documentId, docs[0]!.documentId]) {
        assert.equal(await store.documents.getForConversion(id), undefined);
        assert.equal((await dbOf(store).selectFrom("jobs").select("id").where("documentId", "=", id).execute()).length, 0);
      }
      assert.equal((await dbOf(store).selectFrom("bookmarks").select("bookmarkId").execute()).length, 0);
      assert.equal((await dbOf(store).selectFrom("embeds").select("id").execute()).length, 0);
      assert.ok(await store.documents.getByName(bob, "n-0"), "bob's n-0 stays");
      assert.deepEqual(await store.documents.deleteByNames(alice, ["n-3"]), [], "deleting again removes nothing");
      assert.deepEqual(await store.documents.deleteByNames(bob, ["n-5"]), [], "another account's name is passed over");
      assert.ok(await store.documents.getByName(alice, "n-5"));
    });

    test("deleteByNames takes more names than one statement's chunk", async () => {
      const names = Array.from({ length: 1200 }, (_, i) => `bulk-${i}`);
      names[1100] = "n-5";
      const removed = await store.documents.deleteByNames(alice, names);
      assert.deepEqual(removed.map((r) => r.documentId), [docs[5]!.documentId]);
    });
  });
}

let e2n = 0;
function e2(): string {
  return `pending-${e2n++}`;
}
