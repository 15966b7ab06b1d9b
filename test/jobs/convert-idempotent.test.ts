import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { PAGE_WIDTHS } from "../../src/domain/page-images.ts";
import { convertDocumentHandler, type ConvertDeps } from "../../src/jobs/convert-document.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";
import { DEFAULT_SANDBOX } from "../../src/convert/sandbox.ts";

/** The handler's own guarantees (habit 10): a second run is harmless; a deleted document stays deleted. */
describe("convert-document handler", { timeout: 120_000 }, () => {
  let server: TestServer;
  let client: QuireClient;
  let office: OfficeConverter;
  let deps: ConvertDeps;
  before(async () => {
    server = await startTestServer();
    client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    office = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, slots: 1, workDir: join(server.config.tmpDir, "office") });
    await office.start();
    deps = {
      store: server.services.store, blobs: server.services.blobs, office, log: pino({ level: "silent" }), tmpDir: server.config.tmpDir,
      fetch: { maxBytes: 1 << 20, allowPrivate: true, connectTimeoutMs: 2000, idleTimeoutMs: 2000, totalTimeoutMs: 5000 },
      pdfLimits: { maxPages: 2000, maxPagePixels: 50_000_000, timeoutMs: 60_000, sandbox: DEFAULT_SANDBOX },
      pageWidths: PAGE_WIDTHS,
      ocr: { languages: ["eng"], concurrency: 1 },
    };
  });
  after(async () => {
    await office?.close();
    await server?.close();
  });

  async function upload(file: string): Promise<string> {
    return (unwrap(await client.upload(join(FIXTURES, file))).document as { documentId: string }).documentId;
  }

  const jobFor = async (documentId: string) => (await server.services.store.jobs.getForDocument(documentId))[0]!;
  const signal = new AbortController().signal;

  test("a job run twice publishes the document once and changes nothing the second time", async () => {
    const id = await upload("word97-2pages-tika.doc");
    const handler = convertDocumentHandler(deps);
    const job = await jobFor(id);
    assert.equal(await handler.run({ job, signal }), "success");
    const first = (await server.services.store.documents.getForConversion(id))!;
    assert.equal(first.state, "A");
    assert.equal(first.pageCount, 2);
    const blobs = await server.services.blobs.list(blobKeys.prefix(first.blobId));

    assert.equal(await handler.run({ job, signal }), "skipped");
    assert.deepEqual(await server.services.store.documents.getForConversion(id), first);
    assert.deepEqual(await server.services.blobs.list(blobKeys.prefix(first.blobId)), blobs);
  });

  /**
   * The store, with the document's record deleted just before `repo.method` runs, as a concurrent
   * delete landing at that moment of the conversion would do.
   */
  function storeDeletingBefore<R extends "documents" | "pageRanges">(id: string, repo: R, method: keyof ConvertDeps["store"][R]): ConvertDeps["store"] {
    const store = deps.store;
    const original = store[repo][method] as (...args: unknown[]) => Promise<unknown>;
    const deleting = async (...args: unknown[]) => {
      await dbOf(server.services.store).deleteFrom("documents").where("documentId", "=", id).execute();
      return original.apply(store[repo], args);
    };
    return { ...store, [repo]: { ...store[repo], [method]: deleting } };
  }

  test("a document deleted while it converts is not brought back, and its files do not outlive it", async () => {
    const id = await upload("pdf-tcpdf-14pages.pdf");
    const rec = (await server.services.store.documents.getForConversion(id))!;
    const handler = convertDocumentHandler({ ...deps, store: storeDeletingBefore(id, "documents", "markActive") });
    assert.equal(await handler.run({ job: await jobFor(id), signal }), "skipped");
    assert.equal(await server.services.store.documents.getForConversion(id), undefined);
    assert.deepEqual(await server.services.blobs.list(blobKeys.prefix(rec.blobId)), []);
  });

  test("a document deleted just before it would be split leaves no files behind", async () => {
    // Seen in a full run: the 100-slide deck was deleted while LibreOffice finished; its PDF was
    // stored after the delete, the split found no record, and the job ended as done with the PDF left.
    const id = await upload("pdf-tcpdf-14pages.pdf");
    const rec = (await server.services.store.documents.getForConversion(id))!;
    const handler = convertDocumentHandler({ ...deps, fanout: { minPages: 4, rangePages: 4 }, store: storeDeletingBefore(id, "pageRanges", "fanOut") });
    assert.equal(await handler.run({ job: await jobFor(id), signal }), "skipped");
    assert.equal(await server.services.store.pageRanges.getFanout(id), undefined);
    assert.deepEqual(await server.services.blobs.list(blobKeys.prefix(rec.blobId)), []);
  });
});
