import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { spawnQuire } from "../helpers/quire-process.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * `quire worker` stopped with SIGTERM while it converts: it claims nothing more, lets the running
 * conversion finish, and exits 0; the next job stays queued for another worker, untouched.
 */

const PDF = join(FIXTURES, "pdf-quartz-firefox-1page.pdf");
let server: TestServer;
let web: Server;
let webBase: string;
let requested: () => void;
const fetched = new Promise<void>((resolve) => (requested = resolve));

before(async () => {
  server = await startTestServer();
  const pdf = await readFile(PDF);
  // Sends the PDF slowly, so the conversion is surely running when the worker is told to stop.
  web = createServer((_req, res) => {
    requested();
    res.writeHead(200, { "content-type": "application/pdf", "content-length": pdf.length });
    res.write(pdf.subarray(0, 1000));
    setTimeout(() => res.end(pdf.subarray(1000)), 1500);
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  webBase = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
});

after(async () => {
  web?.closeAllConnections();
  await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
  await server?.close();
});

test("SIGTERM: no new job is claimed, the running one finishes, the worker exits 0", { timeout: 90_000 }, async () => {
  const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
  const running = (unwrap(await client.call("document.url_upload", { slurpUrl: `${webBase}/slow.pdf` })).document as { documentId: string }).documentId;
  await sleep(5); // the next job is due strictly later, so one slot takes them in this order
  const waiting = (unwrap(await client.upload(PDF)).document as { documentId: string }).documentId;

  const worker = spawnQuire(["worker"], {
    QUIRE_DATA_DIR: server.dataDir,
    QUIRE_WORKER_CONCURRENCY: "1",
    QUIRE_OFFICE_SLOTS: "1",
    QUIRE_FETCH_ALLOW_PRIVATE: "1",
    QUIRE_LOG_LEVEL: "info",
  });
  try {
    await fetched;
    assert.equal(await worker.kill("SIGTERM"), 0);
  } finally {
    await worker.kill("SIGKILL");
  }
  const docs = server.services.store.documents;
  assert.equal((await docs.getForConversion(running))?.state, "A", "the conversion in flight finished within the grace period");
  const [job] = await server.services.store.jobs.getForDocument(waiting);
  assert.deepEqual({ state: job?.state, attempts: job?.attempts }, { state: "queued", attempts: 0 }, "the next job was never claimed");
  assert.equal((await docs.getForConversion(waiting))?.state, "P");
});
