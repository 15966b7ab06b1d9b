import { stat } from "node:fs/promises";
import type { Counter } from "prom-client";
import type { BlobStore } from "../blobs/blob-store.ts";

/** The API's blob store, counting the bytes of every spooled upload it takes over. */
export function countingUploads<T extends BlobStore>(blobs: T, uploadBytes: Counter): T {
  return Object.assign(Object.create(blobs) as T, {
    async putFile(key: string, path: string): Promise<void> {
      const { size } = await stat(path); // before: putFile takes the file away
      await blobs.putFile(key, path);
      uploadBytes.inc(size);
    },
  });
}
