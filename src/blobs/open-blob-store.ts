import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import { LocalBlobStore } from "./local-blob-store.ts";

/** A blob store with a local spool for uploads (on the blob file system for LocalBlobStore). */
export type SpoolingBlobStore = BlobStore & { tempPath(): Promise<string> };

export interface OpenedBlobStore {
  blobs: SpoolingBlobStore;
  /** "local" or "s3", for logs. */
  backend: "local" | "s3";
  /** Throws unless the backend can be used now (for /readyz). */
  check(): Promise<void>;
  close(): void;
}

type BlobConfig = Pick<Config, "blobUrl" | "blobDir" | "tmpDir" | "s3Endpoint" | "s3Region">;

/** The one place that picks the backend: QUIRE_BLOB_URL=s3://… means S3, otherwise a local folder. */
export async function openBlobStore(config: Readonly<BlobConfig>): Promise<OpenedBlobStore> {
  if (config.blobUrl === undefined) {
    const blobs = new LocalBlobStore(config.blobDir);
    return {
      blobs,
      backend: "local",
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
  return { blobs, backend: "s3", check: () => blobs.check(), close: () => client.destroy() };
}
