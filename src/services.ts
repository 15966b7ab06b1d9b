import type { Config } from "./config.ts";
import type { DiskSpace } from "./blobs/disk-space.ts";
import { openBlobStore, type SpoolingBlobStore } from "./blobs/open-blob-store.ts";
import { openStore, type OpenStoreOptions, type Store } from "./store/open-store.ts";

export interface Services {
  store: Store;
  /** Local folder or S3 (QUIRE_BLOB_URL); the API and the worker see only the BlobStore interface. */
  blobs: SpoolingBlobStore;
  /** Throws unless the blob backend can be used now (for /readyz). */
  checkBlobs(): Promise<void>;
  /** Free space of the blob and temp folders (QUIRE_MIN_FREE_DISK_MB). */
  diskSpace: DiskSpace;
  close(): Promise<void>;
}

/**
 * Opens the store (running migrations) and the blob store named by the configuration. With
 * `onUnavailable`, a database that cannot be reached yet is waited for rather than failing.
 */
export async function openServices(config: Readonly<Config>, opts: Pick<OpenStoreOptions, "onUnavailable"> = {}): Promise<Services> {
  const store = await openStore(config.databaseUrl, {
    secretKeys: config.secretKeys,
    searchLimits: { concurrency: config.searchConcurrency, queue: config.searchQueue },
    ...opts,
  });
  const opened = await openBlobStore(config);
  return {
    store,
    blobs: opened.blobs,
    checkBlobs: () => opened.check(),
    diskSpace: opened.space,
    close: async () => {
      opened.close();
      await store.close();
    },
  };
}
