import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { after, before, describe, test } from "node:test";
import { assertValidKey, blobKeys } from "../src/blobs/blob-keys.ts";
import type { BlobStore } from "../src/blobs/blob-store.ts";
import { LocalBlobStore } from "../src/blobs/local-blob-store.ts";

/** The contract every blob backend passes (the S3 backend joins this list). */
const BACKENDS: Array<{ name: string; open(): Promise<{ blobs: BlobStore; tempFile(content: string): Promise<string>; cleanup(): Promise<void> }> }> = [
  {
    name: "local",
    async open() {
      const root = await mkdtemp(join(tmpdir(), "quire-blobs-"));
      const blobs = new LocalBlobStore(root);
      return {
        blobs,
        async tempFile(content) {
          const p = await blobs.tempPath();
          await writeFile(p, content);
          return p;
        },
        cleanup: () => rm(root, { recursive: true, force: true }),
      };
    },
  },
];

for (const backend of BACKENDS) {
  describe(`blob store: ${backend.name}`, () => {
    let ctx: Awaited<ReturnType<(typeof BACKENDS)[number]["open"]>>;
    before(async () => (ctx = await backend.open()));
    after(async () => ctx.cleanup());

    test("put, get, exists, list, delete", async () => {
      const key = blobKeys.original("abc123");
      assert.equal(await ctx.blobs.exists(key), false);
      assert.equal(await ctx.blobs.put(key, Readable.from([Buffer.from("hello "), Buffer.from("world")])), 11);
      assert.equal(await ctx.blobs.exists(key), true);
      assert.equal(await text(await ctx.blobs.get(key)), "hello world");
      await ctx.blobs.put(blobKeys.page("abc123", 1, "w1200", "webp"), Readable.from([Buffer.from("p")]));
      assert.deepEqual(await ctx.blobs.list(blobKeys.prefix("abc123")), ["documents/abc123/original", "documents/abc123/pages/w1200/1.webp"]);
      await ctx.blobs.delete(key);
      await ctx.blobs.delete(key); // idempotent
      assert.equal(await ctx.blobs.exists(key), false);
      await assert.rejects(ctx.blobs.get(key));
    });

    test("putFile takes a finished file over", async () => {
      const path = await ctx.tempFile("spooled");
      await ctx.blobs.putFile("documents/xyz/original", path);
      assert.equal(await text(await ctx.blobs.get("documents/xyz/original")), "spooled");
    });

    test("a failing write leaves no object and no temp file", async () => {
      const failing = new Readable({
        read() {
          this.push(Buffer.from("partial"));
          this.destroy(new Error("source broke"));
        },
      });
      await assert.rejects(ctx.blobs.put("documents/broken/original", failing));
      assert.equal(await ctx.blobs.exists("documents/broken/original"), false);
      if (ctx.blobs instanceof LocalBlobStore) {
        assert.deepEqual(await readdir(join(ctx.blobs.root, ".tmp")), []);
      }
    });
  });
}

test("keys that could escape the root are refused", () => {
  for (const bad of ["../x", "a/../b", "/abs", "a//b", "a/./b", "", "a\\b", "a/b/"]) {
    assert.throws(() => assertValidKey(bad), /invalid blob key/, bad);
  }
  assertValidKey(blobKeys.page("Ab_-9", 3, "thumb", "jpg"));
});
