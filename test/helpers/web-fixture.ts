import { resolve } from "node:path";
import { QuireClient, unwrap, type Params } from "../../src/client/quire-client.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { FIXTURES } from "./paths.ts";
import { settled } from "./poll.ts";
import { startTestServer, type TestServer } from "./test-server.ts";
import { startTestWorker, type TestWorker } from "./test-worker.ts";

/** The small multi-page fixture the web tests read. */
export const READER_FIXTURE = "pdf-tcpdf-14pages.pdf";
export const READER_FIXTURE_PAGES = 14;

export interface WebFixture {
  server: TestServer;
  client: QuireClient;
  /** Uploads a fixture and waits until the real worker has taken it out of P. */
  publish(file: string, params?: Params): Promise<DocumentRecord>;
  /** Stops the worker: documents uploaded afterwards stay in P. */
  stopWorker(): Promise<void>;
  /** Starts the worker again: documents left in P get converted. */
  resumeWorker(): Promise<void>;
  /** Uploads a fixture that stays in P (call after stopWorker). */
  uploadPending(file: string, params?: Params): Promise<DocumentRecord>;
  close(): Promise<void>;
}

/** A real server and conversion worker; documents go through the real pipeline (poppler, sharp). */
export async function startWebFixture(env: Record<string, string> = {}): Promise<WebFixture> {
  // The tests' own address is the host an operator would list: links are absolute from it.
  const server = await startTestServer({ QUIRE_ALLOWED_HOSTS: "127.0.0.1", ...env });
  const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
  // PDF fixtures never reach LibreOffice: not starting it saves seconds and two office processes per file.
  let worker: TestWorker | undefined = await startTestWorker(server, { startOffice: false });
  const record = async (documentId: string) => (await server.services.store.documents.getForConversion(documentId))!;
  const upload = async (file: string, params: Params) => {
    const answer = unwrap(await client.upload(resolve(FIXTURES, file), params));
    return (answer.document as { documentId: string }).documentId;
  };
  return {
    server,
    client,
    async publish(file, params = {}) {
      return settled(server, await upload(file, params), 60_000, 50);
    },
    async stopWorker() {
      await worker?.stop();
      worker = undefined;
    },
    async resumeWorker() {
      worker ??= await startTestWorker(server, { startOffice: false });
    },
    async uploadPending(file, params = {}) {
      return record(await upload(file, params));
    },
    async close() {
      await worker?.stop();
      await server.close();
    },
  };
}
