import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions, type DocumentRecord } from "../../src/domain/document.ts";
import { updateDocument } from "../../src/domain/document-operations.ts";
import { sql } from "kysely";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * Issue 26: a renamed document's old names lead to it (migration 0017) until another document
 * takes the name, and go with the document; a cleared description stays cleared through
 * conversions. The same on SQLite and PostgreSQL.
 */

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "",
  language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
  publishDate: undefined, folderIds: [],
};

let seq = 0;
function newDoc(accountId: number, username: string, name: string | undefined, extra: Partial<DocumentOptions> = {}): DocumentRecord {
  const now = Date.now();
  const ids = newDocumentIds(now);
  ids.publicationId = (seq++).toString(16).padStart(8, "0") + ids.publicationId.slice(8);
  ids.documentId = `${ids.revisionId}-${ids.publicationId}`;
  return buildNewDocument(
    ids,
    { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "Title", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    { ...OPTIONS, name, ...extra },
    now,
  );
}

const RESULT = { pageCount: 1, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined };

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`document old names and cleared fields on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let url: string;
    let alice: number;
    let bob: number;
    let t = 1000;
    const rename = (accountId: number, name: string, newName: string) => updateDocument(store.documents, accountId, name, { newName }, t++);
    const oldNameOf = async (username: string, name: string) => (await store.publicPages.documentByOldName(username, name))?.documentId;
    const rowsOf = async (documentId: string) =>
      (await dbOf(store).selectFrom("documentOldNames").select("name").where("documentId", "=", documentId).orderBy("name").execute()).map((r) => r.name);
    const published = async (doc: DocumentRecord) => {
      assert.deepEqual(await store.documents.insertWithJob(doc, "convert-document"), { ok: true });
      assert.equal(await store.documents.markActive(doc.documentId, RESULT, t++), true);
    };

    before(async () => {
      ({ store, drop, url } = await dialect.open());
      alice = await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1);
      bob = await seedAccount(store, "bob", "b".repeat(32), "s".repeat(32), 1);
    });
    after(async () => drop?.());

    test("every earlier name leads to the renamed document; its current name and documentId need no row", async () => {
      const a = newDoc(alice, "alice", "report");
      await published(a);
      await rename(alice, "report", "annual");
      await rename(alice, "annual", "final");
      assert.equal(await oldNameOf("alice", "report"), a.documentId);
      assert.equal(await oldNameOf("alice", "annual"), a.documentId);
      assert.equal(await oldNameOf("alice", "final"), undefined, "its name now is not an old one");
      assert.equal(await oldNameOf("bob", "report"), undefined, "names are per account");
      assert.deepEqual(await rowsOf(a.documentId), ["annual", "report"]);
      // Back to an earlier name: that one is current again, the one it leaves is old.
      await rename(alice, "final", "annual");
      assert.deepEqual(await rowsOf(a.documentId), ["final", "report"]);
    });

    test("another document taking an old name makes it that document's, for good", async () => {
      const a = newDoc(alice, "alice", "first");
      await published(a);
      await rename(alice, "first", "second");
      const b = newDoc(alice, "alice", "first");
      await published(b);
      assert.equal(await oldNameOf("alice", "first"), undefined);
      assert.equal((await store.publicPages.documentByAddress("alice", "first"))?.documentId, b.documentId);
      // B leaves the name: it leads to B now, never back to A.
      await rename(alice, "first", "third");
      assert.equal(await oldNameOf("alice", "first"), b.documentId);
      // Taken by a rename, too.
      await rename(alice, "second", "first");
      assert.equal(await oldNameOf("alice", "first"), undefined);
      assert.equal((await store.publicPages.documentByAddress("alice", "first"))?.documentId, a.documentId);
      assert.equal(await oldNameOf("alice", "second"), a.documentId);
      // Bob's documents are another matter.
      const c = newDoc(bob, "bob", "second");
      await published(c);
      assert.equal(await oldNameOf("alice", "second"), a.documentId);
    });

    test("a name made from the title at conversion keeps the documentId address alone; made private, the old names go", async () => {
      const c = newDoc(alice, "alice", undefined);
      assert.deepEqual(await store.documents.insertWithJob(c, "convert-document"), { ok: true });
      assert.equal(await store.documents.markActive(c.documentId, { ...RESULT, name: "from-title" }, t++), true);
      assert.deepEqual(await rowsOf(c.documentId), [], "the documentId is not kept as an old name");
      await rename(alice, "from-title", "chosen");
      assert.deepEqual(await rowsOf(c.documentId), ["from-title"]);
      // As the API does for a document made private whose name it did not give: the unguessable address only.
      assert.deepEqual(await store.documents.update(alice, c.documentId, { name: c.documentId, access: "private", updatedAt: t++ }), { ok: true });
      assert.deepEqual(await rowsOf(c.documentId), [], "no old name leads to a private document's secret address");
      assert.equal(await oldNameOf("alice", "from-title"), undefined);
    });

    test("migration 0017 runs again over a database that has it without losing a row", async () => {
      const g = newDoc(alice, "alice", "kept-old");
      await published(g);
      await rename(alice, "kept-old", "kept-new");
      await sql`delete from kysely_migration where name = '0017_document_old_names'`.execute(dbOf(store));
      const again = await openStore(url);
      try {
        assert.equal((await again.publicPages.documentByOldName("alice", "kept-old"))?.documentId, g.documentId);
      } finally {
        await again.close();
      }
    });

    test("old names go with their document", async () => {
      const d = newDoc(alice, "alice", "doomed");
      await published(d);
      await rename(alice, "doomed", "doomed-2");
      assert.deepEqual(await rowsOf(d.documentId), ["doomed"]);
      await store.documents.deleteByNames(alice, ["doomed-2"]);
      assert.deepEqual(await rowsOf(d.documentId), []);
      assert.equal(await oldNameOf("alice", "doomed"), undefined);
    });

    test("a cleared description stays empty through conversions; tags cleared stay cleared", async () => {
      const e = newDoc(alice, "alice", "described", { description: undefined, tags: ["x", "y"] });
      assert.deepEqual(await store.documents.insertWithJob(e, "convert-document"), { ok: true });
      // Cleared while converting: the conversion's summary does not replace it.
      await updateDocument(store.documents, alice, "described", { description: "", tags: [] }, t++);
      assert.equal(await store.documents.markActive(e.documentId, { ...RESULT, description: "Page text noise 1 2 3" }, t++), true);
      let rec = (await store.documents.getById(alice, e.documentId))!;
      assert.equal(rec.description, "");
      assert.deepEqual(rec.tags, []);
      assert.equal(rec.descriptionGiven, true);
      // Converted again (its file replaced): still the publisher's empty description.
      await dbOf(store).updateTable("documents").set({ state: "P" }).where("documentId", "=", e.documentId).execute();
      assert.equal(await store.documents.markActive(e.documentId, { ...RESULT, description: "Other noise" }, t++), true);
      rec = (await store.documents.getById(alice, e.documentId))!;
      assert.equal(rec.description, "");
      // Whereas one the publisher never touched takes the summary.
      const f = newDoc(alice, "alice", "untouched");
      assert.deepEqual(await store.documents.insertWithJob(f, "convert-document"), { ok: true });
      assert.equal(await store.documents.markActive(f.documentId, { ...RESULT, description: "Summary" }, t++), true);
      assert.equal((await store.documents.getById(alice, f.documentId))!.description, "Summary");
    });
  });
}
