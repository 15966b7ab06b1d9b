import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";
import { createS3Client } from "../../src/blobs/s3-blob-store.ts";

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  /** AWS variables that point the SDK's default chain (and Quire's config) at this server. */
  env: Record<string, string>;
  client(): S3Client;
  close(): Promise<void>;
}

/** s3rver's fixed credentials: it checks signatures, so the SDK must sign with these. */
const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

/** A real S3-protocol server (s3rver) on a free port, over a temp folder, with one empty bucket. */
export async function startS3Server(bucket = "quire-test"): Promise<TestS3Server> {
  const directory = await mkdtemp(join(tmpdir(), "quire-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    client: () => createS3Client({ endpoint, region: "us-east-1", credentials: CREDENTIALS }),
    async close() {
      // SDK clients keep connections alive; they must not hold the close up.
      server.httpServer?.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
