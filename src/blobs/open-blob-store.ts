import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import { watchDiskSpace, type DiskSpace } from "./disk-space.ts";
import { LocalBlobStore } from "./local-blob-store.ts";

/** A blob store with a local spool for uploads (on the blob file system for LocalBlobStore). */
export type SpoolingBlobStore = BlobStore & { tempPath(): Promise<string> };

export interface OpenedBlobStore {
  blobs: SpoolingBlobStore;
  /** "local" or "s3", for logs. */
  backend: "local" | "s3";
  /** Throws unless the backend can be used now (for /readyz). */
  check(): Promise<void>;
  /** The data disk's free space: the blob folder and the temp folder (S3: the temp folder, where uploads spool). */
  space: DiskSpace;
  close(): void;
}

type BlobConfig = Pick<Config, "blobUrl" | "blobDir" | "tmpDir" | "s3Endpoint" | "s3Region"> & Partial<Pick<Config, "minFreeDiskBytes">>;

/** The one place that picks the backend: QUIRE_BLOB_URL=s3://… means S3, otherwise a local folder. */
export async function openBlobStore(config: Readonly<BlobConfig>): Promise<OpenedBlobStore> {
  if (config.blobUrl === undefined) {
    const blobs = new LocalBlobStore(config.blobDir);
    const space = watchDiskSpace(
      [{ name: "blob folder (QUIRE_BLOB_DIR)", path: config.blobDir }, { name: "temp folder (QUIRE_TMP_DIR)", path: config.tmpDir }],
      config.minFreeDiskBytes ?? 0,
    );
    return {
      blobs,
      backend: "local",
      space,
      async check() {
        await mkdir(blobs.root, { recursive: true });
        await access(blobs.root, constants.W_OK);
      },
      close() {},
    };
  }
  // The AWS SDK takes a good part of a second to load: only processes that use S3 pay for it.
  const { createS3Client, parseS3Url, S3BlobStore } = await import("./s3-blob-store.ts");
  const { bucket, prefix } = parseS3Url(config.blobUrl);
  // Credentials come from the SDK's default chain (environment, profile, instance role).
  const client = createS3Client({ endpoint: config.s3Endpoint, region: config.s3Region });
  const blobs = new S3BlobStore({ client, bucket, prefix, spoolDir: join(config.tmpDir, "spool") });
  const space = watchDiskSpace([{ name: "temp folder (QUIRE_TMP_DIR)", path: config.tmpDir }], config.minFreeDiskBytes ?? 0);
  return { blobs, backend: "s3", check: () => blobs.check(), space, close: () => client.destroy() };
}
