import type { Config } from "./config.ts";
import { openBlobStore, type SpoolingBlobStore } from "./blobs/open-blob-store.ts";
import { openStore, type Store } from "./store/open-store.ts";

export interface Services {
  store: Store;
  /** Local folder or S3 (QUIRE_BLOB_URL); the API and the worker see only the BlobStore interface. */
  blobs: SpoolingBlobStore;
  /** Throws unless the blob backend can be used now (for /readyz). */
  checkBlobs(): Promise<void>;
  close(): Promise<void>;
}

/** Opens the store (running migrations) and the blob store named by the configuration. */
export async function openServices(config: Readonly<Config>): Promise<Services> {
  const store = await openStore(config.databaseUrl, {
    secretKeys: config.secretKeys,
    searchLimits: { concurrency: config.searchConcurrency, queue: config.searchQueue },
  });
  const opened = await openBlobStore(config);
  return {
    store,
    blobs: opened.blobs,
    checkBlobs: () => opened.check(),
    close: async () => {
      opened.close();
      await store.close();
    },
  };
}
