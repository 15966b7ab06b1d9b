import type { Config } from "./config.ts";
import { LocalBlobStore } from "./blobs/local-blob-store.ts";
import { openStore, type Store } from "./store/open-store.ts";

export interface Services {
  store: Store;
  blobs: LocalBlobStore;
  close(): Promise<void>;
}

/** Opens the store (running migrations) and the blob store named by the configuration. */
export async function openServices(config: Readonly<Config>): Promise<Services> {
  const store = await openStore(config.databaseUrl);
  const blobs = new LocalBlobStore(config.blobDir);
  return { store, blobs, close: () => store.close() };
}
