import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { settled } from "../helpers/poll.ts";
import { startS3Server, type TestS3Server } from "../helpers/s3-server.ts";
import { listFiles, startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/**
 * The whole pipeline with QUIRE_BLOB_URL=s3://…: the API spools locally and sends the original to
 * S3, the worker downloads it to scratch, converts, and uploads every result to S3; nothing is left
 * in the local blob folder or the spool.
 */

const PDF = join(FIXTURES, "pdf-quartz-firefox-1page.pdf");

let s3: TestS3Server;
let server: TestServer;
let worker: TestWorker;
let client: QuireClient;
let web: Server;
let webBase: string;

before(async () => {
  s3 = await startS3Server("quire-e2e");
  // The SDK takes credentials from its default chain, as in production: here, the environment.
  Object.assign(process.env, s3.env);
  server = await startTestServer({ QUIRE_BLOB_URL: `s3://${s3.bucket}/site-a`, ...s3.env });
  // PDFs only: LibreOffice is never needed.
  worker = await startTestWorker(server, { startOffice: false });
  client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
  const pdf = await readFile(PDF);
  web = createServer((_req, res) => res.writeHead(200, { "content-type": "application/pdf" }).end(pdf));
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  webBase = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
});

after(async () => {
  await worker?.stop();
  await server?.close();
  web?.closeAllConnections();
  await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
  await s3?.close();
});

const settledDoc = (documentId: string) => settled(server, documentId, 90_000);

test("file and URL uploads reach A with every blob in S3 and nothing local", { timeout: 120_000 }, async () => {
  const fromFile = (unwrap(await client.upload(PDF)).document as { documentId: string }).documentId;
  const fromUrl = (unwrap(await client.call("document.url_upload", { slurpUrl: `${webBase}/doc.pdf` })).document as { documentId: string })
    .documentId;
  const s3Client = s3.client();
  try {
    for (const id of [fromFile, fromUrl]) {
      const d = await settledDoc(id);
      assert.equal(d.state, "A", `${id}: ${d.errorMessage}`);
      assert.equal(d.pageCount, 1);
      const keys = await server.services.blobs.list(blobKeys.prefix(d.blobId));
      assert.ok(keys.includes(blobKeys.original(d.blobId)), "original in S3");
      assert.ok(keys.includes(blobKeys.text(d.blobId)), "text in S3");
      assert.ok(keys.some((k) => k.includes("/pages/")), "page images in S3");
      assert.ok(keys.some((k) => k.includes("/cover-large.")), "covers in S3");
    }
    // under the configured prefix, not at the bucket's root
    const { ListObjectsCommand } = await import("@aws-sdk/client-s3");
    const all = await s3Client.send(new ListObjectsCommand({ Bucket: s3.bucket }));
    assert.ok((all.Contents ?? []).length > 0 && (all.Contents ?? []).every((o) => o.Key?.startsWith("site-a/documents/")));
  } finally {
    s3Client.destroy();
  }
  assert.deepEqual(await server.listBlobFiles(), [], "no local blob folder in use");
  assert.deepEqual(await listFiles(join(server.config.tmpDir, "spool")), [], "spool files taken over");

  // deleting a document removes its objects from the bucket
  const d = await server.services.store.documents.getForConversion(fromFile);
  assert.ok(d);
  unwrap(await client.call("document.delete", { names: d.name }));
  assert.deepEqual(await server.services.blobs.list(blobKeys.prefix(d.blobId)), []);
});
