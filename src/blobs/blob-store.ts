import type { Readable } from "node:stream";
import { assertValidPrefix } from "./blob-keys.ts";

/**
 * Original files and page images. Backends only ever receive keys made by blob-keys.ts.
 * Every write is atomic: a reader sees the whole object or none.
 */
export interface BlobStore {
  /** Writes a stream under `key`; resolves with the byte count once the object is durable. */
  put(key: string, body: Readable): Promise<number>;
  /** Takes ownership of a finished local file (the upload spool) and stores it under `key`. */
  putFile(key: string, path: string): Promise<void>;
  get(key: string): Promise<Readable>;
  exists(key: string): Promise<boolean>;
  /** Deleting a key that does not exist is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Deletes every key under `prefix` (a whole folder, such as `blobKeys.prefix(blobId)`) but those
   * in `keep`; answers how many were deleted. Deleting an empty folder is not an error.
   */
  deletePrefix(prefix: string, keep?: readonly string[]): Promise<number>;
  /** Every key under `prefix` (used by deletes and the orphan clean-up). */
  list(prefix: string): Promise<string[]>;
  /**
   * Every key under `prefix` with the time it was last written (epoch ms), so the orphan clean-up
   * can leave alone what an upload or a conversion is writing right now. Optional: a store without
   * it is never cleaned of orphans (local: file mtime; S3 would use ListObjects' LastModified).
   */
  listWithTimes?(prefix: string): Promise<Array<{ key: string; modifiedAt: number }>>;
  /** Removes the store's own scratch files (upload spools) last written before `before`; answers how many. */
  removeStaleTemp?(before: number): Promise<number>;
}

/** `deletePrefix` for a backend whose objects go one by one: list, then delete, in key order. */
export async function deleteListed(blobs: Pick<BlobStore, "list" | "delete">, prefix: string, keep: readonly string[] = []): Promise<number> {
  assertValidPrefix(prefix);
  let deleted = 0;
  for (const key of await blobs.list(prefix)) {
    if (keep.includes(key)) continue;
    await blobs.delete(key);
    deleted++;
  }
  return deleted;
}
