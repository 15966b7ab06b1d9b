import assert from "node:assert/strict";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, test } from "node:test";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/**
 * A conversion that fails after it has stored something (here: LibreOffice made the PDF, which
 * then has more pages than QUIRE_MAX_PAGES allows) ends in F with only the original left.
 */

let server: TestServer;
let worker: TestWorker;

before(async () => {
  server = await startTestServer({ QUIRE_MAX_PAGES: "3" });
  worker = await startTestWorker(server, { officeTimeoutMs: 30_000 });
});
after(async () => {
  await worker?.stop();
  await server?.close();
});

test("an office document over the page limit fails with code 5 and keeps only its original", { timeout: 120_000 }, async () => {
  const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
  const answer = unwrap(await client.upload(join(FIXTURES, "odt-toc-15pages-lo54.odt")));
  const documentId = (answer.document as { documentId: string }).documentId;
  let doc = (await server.services.store.documents.getForConversion(documentId))!;
  for (let i = 0; doc.state === "P" && i < 1000; i++) {
    await sleep(100);
    doc = (await server.services.store.documents.getForConversion(documentId))!;
  }
  assert.equal(doc.state, "F");
  assert.equal(doc.errorCode, 5, doc.errorMessage);
  // The job gives up just after marking the document: wait until its leftovers are gone.
  let keys: string[] = [];
  for (let i = 0; i < 100; i++) {
    keys = await server.services.blobs.list(blobKeys.prefix(doc.blobId));
    if (keys.length <= 1) break;
    await sleep(100);
  }
  assert.deepEqual(keys, [blobKeys.original(doc.blobId)]);
});
