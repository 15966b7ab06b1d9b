import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions, type DocumentRecord } from "../../src/domain/document.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * `accounts.documents_version` moves on every change to an account's documents, made by any
 * writer, and only the owning account's: cached list answers (src/api/answer-cache.ts) rely on it.
 */

const pgSkip = await postgresUnavailable();

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

function newDoc(accountId: number, username: string, name: string): DocumentRecord {
  const now = Date.now();
  const d = buildNewDocument(
    newDocumentIds(now),
    { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    OPTIONS,
    now,
  );
  return { ...d, name };
}

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`documents version on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let alice: number;
    const ALICE_KEY = "a".repeat(32);
    const BOB_KEY = "b".repeat(32);

    const versionOf = async (key: string) => (await store.accounts.getKeyOwnerForSigning(key))!.documentsVersion;

    /** Runs a change and answers how far it moved alice's and bob's versions. */
    async function moves(change: () => Promise<unknown>): Promise<{ alice: number; bob: number }> {
      const [a0, b0] = [await versionOf(ALICE_KEY), await versionOf(BOB_KEY)];
      await change();
      return { alice: (await versionOf(ALICE_KEY)) - a0, bob: (await versionOf(BOB_KEY)) - b0 };
    }

    before(async () => {
      ({ store, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", ALICE_KEY, "s".repeat(32), 1));
      await seedAccount(store, "bob", BOB_KEY, "t".repeat(32), 1);
    });
    after(async () => drop?.());

    test("a new account starts at 0", async () => {
      assert.equal(await versionOf(ALICE_KEY), 0);
      assert.equal(typeof (await versionOf(ALICE_KEY)), "number");
    });

    test("every write of the documents repo moves the owner's version and no other", async () => {
      const one = newDoc(alice, "alice", "one");
      const two = newDoc(alice, "alice", "two");
      const writes: Array<[string, () => Promise<unknown>]> = [
        ["insert", () => store.documents.insertWithJob(one, "convert-document")],
        ["insert another", () => store.documents.insertWithJob(two, "convert-document")],
        ["fetched original", () => store.documents.recordFetchedOriginal(one.documentId, "pdf", 10, Date.now())],
        ["P -> A", () => store.documents.markActive(one.documentId, { pageCount: 3, coverWidth: 1, coverHeight: 1, description: "d", name: undefined }, Date.now())],
        ["P -> F", () => store.documents.markFailed(two.documentId, 1, "bad", Date.now())],
        ["update", () => store.documents.update(alice, one.documentId, { title: "new title", updatedAt: Date.now() })],
        ["delete", () => store.documents.deleteByNames(alice, ["one", "two"])],
      ];
      for (const [what, write] of writes) {
        const moved = await moves(write);
        assert.ok(moved.alice > 0, `${what} moves alice's version`);
        assert.equal(moved.bob, 0, `${what} leaves bob's version alone`);
      }
    });

    test("a write that changes no row leaves the version alone", async () => {
      const moved = await moves(() => store.documents.deleteByNames(alice, ["no-such-name"]));
      assert.deepEqual(moved, { alice: 0, bob: 0 });
    });

    test("a write made by SQL outside the repositories moves it too", async () => {
      const three = newDoc(alice, "alice", "three");
      await store.documents.insertWithJob(three, "convert-document");
      const moved = await moves(() =>
        sql`update documents set title = 'by hand' where document_id = ${three.documentId}`.execute(dbOf(store)),
      );
      assert.ok(moved.alice > 0);
      assert.equal(moved.bob, 0);
    });
  });
}
