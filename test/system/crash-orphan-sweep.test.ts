import assert from "node:assert/strict";
import { mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { LocalBlobStore } from "../../src/blobs/local-blob-store.ts";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import { sweepOrphanBlobs } from "../../src/jobs/orphan-sweep.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { listFiles } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * The orphan clean-up pass (issue 7): blob folders no document references go once older than the
 * grace period; referenced folders, and anything recent, stay; stale upload spools go too.
 */

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};
const HOUR = 3_600_000;
const log = pino({ level: "silent" });

async function recordFor(store: Store, blobId: string): Promise<void> {
  const owner = (await dbOf(store).selectFrom("accounts").select(["id", "username"]).executeTakeFirstOrThrow());
  const now = Date.now();
  const doc = buildNewDocument(
    newDocumentIds(now),
    { accountId: owner.id, username: owner.username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId },
    OPTIONS,
    now,
  );
  await store.documents.insertWithJob(doc, "convert-document");
}

async function putAged(blobs: LocalBlobStore, key: string, ageMs: number): Promise<void> {
  await blobs.put(key, Readable.from([Buffer.from("x")]));
  const t = new Date(Date.now() - ageMs);
  await utimes(join(blobs.root, key), t, t);
}

for (const dialect of DIALECTS) {
  describe(`orphan clean-up (${dialect.name})`, async () => {
    const skip = dialect.name === "postgres" ? await postgresUnavailable() : undefined;
    let opened: Awaited<ReturnType<typeof dialect.open>>;
    let dir: string;
    before(async () => {
      if (skip) return;
      opened = await dialect.open();
      dir = await mkdtemp(join(tmpdir(), "quire-orphans-"));
      await createAccount(opened.store, "tester");
    });
    after(async () => {
      await opened?.drop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    test("removes only unreferenced folders older than the grace period, and stale spools", { skip }, async () => {
      const blobs = new LocalBlobStore(join(dir, "blobs"));
      const kept = newBlobId();
      const orphan = newBlobId();
      const young = newBlobId();
      const mixed = newBlobId();
      await recordFor(opened.store, kept);
      await putAged(blobs, blobKeys.original(kept), 3 * HOUR);
      await putAged(blobs, blobKeys.page(kept, 1, "read", "webp"), 3 * HOUR);
      await putAged(blobs, blobKeys.original(orphan), 3 * HOUR);
      await putAged(blobs, blobKeys.page(orphan, 1, "read", "webp"), 3 * HOUR);
      await putAged(blobs, blobKeys.original(young), 60_000); // an upload whose record is being committed
      await putAged(blobs, blobKeys.original(mixed), 3 * HOUR);
      await putAged(blobs, blobKeys.text(mixed), 60_000); // a folder still being written
      const staleSpool = await blobs.tempPath();
      await writeFile(staleSpool, "old");
      await utimes(staleSpool, new Date(Date.now() - 3 * HOUR), new Date(Date.now() - 3 * HOUR));
      const liveSpool = await blobs.tempPath();
      await writeFile(liveSpool, "uploading");

      const report = await sweepOrphanBlobs({ blobs, references: opened.store.blobReferences, log, graceMs: HOUR });
      assert.deepEqual(report, { orphanFolders: 1, orphanBlobs: 2, staleTemp: 1 });
      const left = await listFiles(blobs.root);
      assert.deepEqual(
        left,
        [
          `.tmp/${liveSpool.split("/").pop()}`,
          blobKeys.original(kept), blobKeys.page(kept, 1, "read", "webp"),
          blobKeys.original(mixed), blobKeys.text(mixed),
          blobKeys.original(young),
        ].sort(),
      );
      const again = await sweepOrphanBlobs({ blobs, references: opened.store.blobReferences, log, graceMs: HOUR });
      assert.deepEqual(again, { orphanFolders: 0, orphanBlobs: 0, staleTemp: 0 }, "a second pass finds nothing more");
    });

    test("looks references up in chunks (more folders than one statement's parameters)", { skip }, async () => {
      const blobs = new LocalBlobStore(join(dir, "many"));
      const ids = Array.from({ length: 1200 }, () => newBlobId());
      for (const id of ids.slice(0, 3)) await recordFor(opened.store, id);
      const found = await opened.store.blobReferences.referencedBlobIds(ids);
      assert.deepEqual([...found].sort(), ids.slice(0, 3).sort());
      assert.equal((await sweepOrphanBlobs({ blobs, references: opened.store.blobReferences, log, graceMs: HOUR })).orphanFolders, 0);
    });
  });
}
