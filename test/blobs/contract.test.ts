import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { buffer, text } from "node:stream/consumers";
import { after, before, describe, test } from "node:test";
import { assertValidKey, blobIdOf, blobKeys } from "../../src/blobs/blob-keys.ts";
import { LocalBlobStore } from "../../src/blobs/local-blob-store.ts";
import { openBlobStore, type SpoolingBlobStore } from "../../src/blobs/open-blob-store.ts";
import { parseS3Url, S3BlobStore } from "../../src/blobs/s3-blob-store.ts";
import { loadConfig } from "../../src/config.ts";
import { startS3Server, type TestS3Server } from "../helpers/s3-server.ts";

/** S3's smallest allowed part; objects above it go up as multipart uploads. */
const PART = 5 * 1024 * 1024;

interface Backend {
  blobs: SpoolingBlobStore;
  /** Nothing half-written is left: no temp files (local), no open multipart uploads (S3). */
  leftovers(): Promise<string[]>;
  cleanup(): Promise<void>;
}

/** The contract every blob backend passes, each against its real storage. */
const BACKENDS: Array<{ name: string; open(): Promise<Backend> }> = [
  {
    name: "local",
    async open() {
      const root = await mkdtemp(join(tmpdir(), "quire-blobs-"));
      const blobs = new LocalBlobStore(root);
      return {
        blobs,
        leftovers: async () => readdir(join(root, ".tmp")).catch(() => []),
        cleanup: () => rm(root, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "s3 (s3rver)",
    async open() {
      const s3: TestS3Server = await startS3Server();
      const spoolDir = await mkdtemp(join(tmpdir(), "quire-spool-"));
      const client = s3.client();
      const blobs = new S3BlobStore({ client, bucket: s3.bucket, prefix: "install-1/", spoolDir, partSize: PART, listPageSize: 10 });
      return {
        blobs,
        // s3rver cannot list open multipart uploads; what it can show is every object in the bucket.
        leftovers: async () => (await blobs.list("documents/broken")),
        async cleanup() {
          client.destroy();
          await s3.close();
          await rm(spoolDir, { recursive: true, force: true });
        },
      };
    },
  },
];

for (const backend of BACKENDS) {
  describe(`blob store: ${backend.name}`, () => {
    let ctx: Backend;
    before(async () => (ctx = await backend.open()));
    after(async () => ctx.cleanup());

    test("deletePrefix: every key of one folder but those kept; nothing of a neighbour; refuses a prefix that is not a folder", async () => {
      const put = (key: string) => ctx.blobs.put(key, Readable.from([Buffer.from("x")]));
      await put(blobKeys.original("del1"));
      await put(blobKeys.pdf("del1"));
      await put(blobKeys.page("del1", 1, "w1200", "webp"));
      await put(blobKeys.page("del1", 2, "w1200", "webp"));
      await put(blobKeys.original("del10"));
      assert.equal(await ctx.blobs.deletePrefix(blobKeys.prefix("del1"), [blobKeys.original("del1")]), 3);
      assert.deepEqual(await ctx.blobs.list(blobKeys.prefix("del1")), [blobKeys.original("del1")]);
      assert.equal(await ctx.blobs.deletePrefix(blobKeys.prefix("del1")), 1);
      assert.deepEqual(await ctx.blobs.list(blobKeys.prefix("del1")), []);
      assert.equal(await ctx.blobs.deletePrefix(blobKeys.prefix("del1")), 0, "an empty folder is not an error");
      assert.equal(await ctx.blobs.exists(blobKeys.original("del10")), true, "a folder whose name starts alike stays");
      for (const bad of ["", "documents/del1", "/", "documents/../", "../documents/"]) {
        await assert.rejects(ctx.blobs.deletePrefix(bad), /invalid blob/, JSON.stringify(bad));
      }
      assert.equal(await ctx.blobs.exists(blobKeys.original("del10")), true, "a refused prefix deletes nothing");
      await ctx.blobs.deletePrefix(blobKeys.prefix("del10"));
    });

    test("put, get, exists, list, delete", async () => {
      const key = blobKeys.original("abc123");
      assert.equal(await ctx.blobs.exists(key), false);
      assert.equal(await ctx.blobs.put(key, Readable.from([Buffer.from("hello "), Buffer.from("world")])), 11);
      assert.equal(await ctx.blobs.exists(key), true);
      assert.equal(await text(await ctx.blobs.get(key)), "hello world");
      await ctx.blobs.put(blobKeys.page("abc123", 1, "w1200", "webp"), Readable.from([Buffer.from("p")]));
      await ctx.blobs.put(blobKeys.original("abc1234"), Readable.from([Buffer.from("other")]));
      assert.deepEqual(await ctx.blobs.list(blobKeys.prefix("abc123")), ["documents/abc123/original", "documents/abc123/pages/w1200/1.webp"]);
      // A prefix ends anywhere: within a name, at a folder, below one, in a folder that is not there.
      assert.deepEqual(await ctx.blobs.list("documents/abc12"), ["documents/abc123/original", "documents/abc123/pages/w1200/1.webp", "documents/abc1234/original"]);
      assert.deepEqual(await ctx.blobs.list("documents/abc123/pages/"), ["documents/abc123/pages/w1200/1.webp"]);
      assert.deepEqual(await ctx.blobs.list("documents/abc123/pages/w12"), ["documents/abc123/pages/w1200/1.webp"]);
      assert.deepEqual(await ctx.blobs.list("documents/nothing/here/"), []);
      assert.deepEqual(await ctx.blobs.list("documents/../documents/abc1234/"), []);
      assert.ok((await ctx.blobs.list("")).includes("documents/abc1234/original"));
      await ctx.blobs.delete(key);
      await ctx.blobs.delete(key); // idempotent
      assert.equal(await ctx.blobs.exists(key), false);
      await assert.rejects(ctx.blobs.get(key));
    });

    test("put replaces an existing object whole", async () => {
      const key = blobKeys.text("replace");
      await ctx.blobs.put(key, Readable.from([Buffer.from("first version, longer")]));
      await ctx.blobs.put(key, Readable.from([Buffer.from("second")]));
      assert.equal(await text(await ctx.blobs.get(key)), "second");
    });

    test("putFile takes a spooled file over and removes the spool file", async () => {
      const path = await ctx.blobs.tempPath();
      await writeFile(path, "spooled");
      await ctx.blobs.putFile("documents/xyz/original", path);
      assert.equal(await text(await ctx.blobs.get("documents/xyz/original")), "spooled");
      await assert.rejects(stat(path), { code: "ENOENT" });
    });

    test("objects larger than one part stream both ways intact (multipart on S3)", async () => {
      const data = randomBytes(2 * PART + 12_345);
      assert.equal(await ctx.blobs.put("documents/big/original", Readable.from([data.subarray(0, PART + 7), data.subarray(PART + 7)])), data.length);
      assert.ok((await buffer(await ctx.blobs.get("documents/big/original"))).equals(data));
      const path = await ctx.blobs.tempPath();
      await writeFile(path, data);
      await ctx.blobs.putFile("documents/big/document.pdf", path);
      assert.ok((await buffer(await ctx.blobs.get("documents/big/document.pdf"))).equals(data));
      assert.deepEqual(await ctx.leftovers(), []);
    });

    test("list pages through more keys than one listing holds", async () => {
      const keys = Array.from({ length: 25 }, (_, i) => blobKeys.page("many", i + 1, "thumb", "jpg"));
      for (let i = 0; i < keys.length; i += 5) {
        await Promise.all(keys.slice(i, i + 5).map((k) => ctx.blobs.put(k, Readable.from([Buffer.from("x")]))));
      }
      assert.deepEqual(await ctx.blobs.list(blobKeys.prefix("many")), [...keys].sort());
    });

    test("listWithTimes gives each key its write time; removeStaleTemp removes only old spool files", async () => {
      const before = Date.now() - 2000;
      await ctx.blobs.put(blobKeys.text("timed"), Readable.from([Buffer.from("t")]));
      const listed = await ctx.blobs.listWithTimes!(blobKeys.prefix("timed"));
      assert.deepEqual(listed.map((o) => o.key), [blobKeys.text("timed")]);
      assert.ok(listed[0]!.modifiedAt >= before && listed[0]!.modifiedAt <= Date.now() + 2000);
      const old = await ctx.blobs.tempPath();
      await writeFile(old, "left by a crash");
      await utimes(old, new Date(before - 60_000), new Date(before - 60_000));
      const fresh = await ctx.blobs.tempPath();
      await writeFile(fresh, "an upload in progress");
      assert.equal(await ctx.blobs.removeStaleTemp!(before), 1);
      await assert.rejects(stat(old), { code: "ENOENT" });
      await stat(fresh);
      await rm(fresh);
    });

    for (const size of [10, 2 * PART]) {
      test(`a failing write of ${size > PART ? "several parts" : "a small object"} leaves no object and nothing half-written`, async () => {
        let sent = 0;
        const failing = new Readable({
          read() {
            if (sent >= size) return this.destroy(new Error("source broke"));
            const chunk = randomBytes(Math.min(1024 * 1024, size - sent));
            sent += chunk.length;
            this.push(chunk);
          },
        });
        await assert.rejects(ctx.blobs.put("documents/broken/original", failing));
        assert.equal(await ctx.blobs.exists("documents/broken/original"), false);
        assert.deepEqual(await ctx.leftovers(), []);
      });
    }

    test("a body that fails before its copy starts (a file gone from under it) is a refused write, not a crash", async () => {
      // A read stream opens its file at once and reports a missing one as an error event: with no
      // listener yet (the store still making its temporary file), that error ended the process.
      const gone = createReadStream(join(tmpdir(), `quire-missing-${randomBytes(6).toString("hex")}`));
      await assert.rejects(ctx.blobs.put("documents/broken/original", gone), { code: "ENOENT" });
      assert.equal(await ctx.blobs.exists("documents/broken/original"), false);
      assert.deepEqual(await ctx.leftovers(), []);
    });
  });
}

test("keys that could escape the root are refused", () => {
  for (const bad of ["../x", "a/../b", "/abs", "a//b", "a/./b", "", "a\\b", "a/b/"]) {
    assert.throws(() => assertValidKey(bad), /invalid blob key/, bad);
  }
  assertValidKey(blobKeys.page("Ab_-9", 3, "thumb", "jpg"));
});

test("every key of a document's folder is read back to its blobId, and nothing else is", () => {
  for (const key of [blobKeys.original("b1"), blobKeys.pdf("b1"), blobKeys.page("b1", 2, "thumb", "jpg"), blobKeys.cover("b1", "small", "jpg"), blobKeys.text("b1")]) {
    assert.ok(key.startsWith(blobKeys.root) && key.startsWith(blobKeys.prefix("b1")));
    assert.equal(blobIdOf(key), "b1", key);
  }
  for (const other of ["documents/b1", "documents//x", "other/b1/original", ".tmp/abc"]) assert.equal(blobIdOf(other), undefined, other);
});

test("QUIRE_BLOB_URL picks the backend; bad values are configuration errors", async () => {
  assert.deepEqual(parseS3Url("s3://my-bucket"), { bucket: "my-bucket", prefix: "" });
  assert.deepEqual(parseS3Url("s3://my-bucket/a/b/"), { bucket: "my-bucket", prefix: "a/b/" });
  assert.throws(() => parseS3Url("s3://my-bucket/../x"));
  const local = await openBlobStore(loadConfig({ QUIRE_DATA_DIR: "/tmp/quire-x" }));
  assert.equal(local.backend, "local");
  const s3 = await openBlobStore(loadConfig({ QUIRE_DATA_DIR: "/tmp/quire-x", QUIRE_BLOB_URL: "s3://bucket/p", AWS_ENDPOINT_URL: "http://127.0.0.1:9" }));
  assert.equal(s3.backend, "s3");
  // The data disk whose free space /readyz and uploads watch (issue 23 item 0d): with S3, only the
  // temp folder, where uploads spool; locally the blob folder too.
  assert.deepEqual(s3.space.folders.map((f) => f.path), ["/tmp/quire-x/tmp"]);
  assert.deepEqual(local.space.folders.map((f) => f.path), ["/tmp/quire-x/blobs", "/tmp/quire-x/tmp"]);
  assert.equal(local.space.minFreeBytes, 256 * 1024 * 1024);
  s3.close();
  assert.throws(() => loadConfig({ QUIRE_BLOB_URL: "file:///x" }), /QUIRE_BLOB_URL/);
  assert.throws(() => loadConfig({ QUIRE_BLOB_URL: "s3://bucket", AWS_ENDPOINT_URL: "minio:9000" }), /AWS_ENDPOINT_URL/);
});
