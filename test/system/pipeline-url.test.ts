import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { settled } from "../helpers/poll.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/**
 * URL uploads end to end (decisions §6): upload through the API, the real worker fetches, and the
 * final state shows why. The API accepts any syntactically valid http(s) address; the worker refuses.
 */

const PDF_FIXTURE = new URL("../../../shared/fixtures/pdf-quartz-firefox-1page.pdf", import.meta.url);
const MiB = 1024 * 1024;

interface Doc {
  documentId: string;
  state: string;
  errorCode: number;
  errorMessage: string;
  pageCount: number;
}

/** A local HTTP server on `host` that records every request path and can drop its open connections. */
interface LocalWeb {
  server: Server;
  base: string;
  port: number;
  requests: string[];
  close(): Promise<void>;
}

async function startLocalWeb(host: string, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<LocalWeb> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  const port = (server.address() as { port: number }).port;
  return {
    server,
    base: `http://${host}:${port}`,
    port,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

class Pipeline {
  constructor(
    readonly server: TestServer,
    readonly worker: TestWorker,
    readonly client: QuireClient,
  ) {}

  static async start(workerOpts: Parameters<typeof startTestWorker>[1]): Promise<Pipeline> {
    const server = await startTestServer();
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    // Every address here serves a PDF or fails before conversion: LibreOffice is never needed.
    const worker = await startTestWorker(server, { startOffice: false, ...workerOpts });
    return new Pipeline(server, worker, client);
  }

  async close(): Promise<void> {
    await this.worker.stop();
    await this.server.close();
  }

  /** Uploads by URL; the API accepts the address and answers a document in P. */
  async upload(slurpUrl: string): Promise<string> {
    const answer = unwrap(await this.client.call("document.url_upload", { slurpUrl }));
    const doc = answer.document as Doc;
    assert.equal(doc.state, "P", `${slurpUrl} is accepted by the API in P`);
    return doc.documentId;
  }

  /** Polls until the document leaves P; fails rather than hangs. */
  async settled(documentId: string, guardMs = 90_000): Promise<Doc> {
    return (await settled(this.server, documentId, guardMs)) as unknown as Doc;
  }

  async uploadAndSettle(slurpUrl: string): Promise<Doc> {
    return this.settled(await this.upload(slurpUrl));
  }
}

function assertFetchFailure(d: Doc, what: string): void {
  assert.equal(d.state, "F", `${what}: state (${d.errorMessage})`);
  assert.equal(d.errorCode, 1, `${what}: errorCode (${d.errorMessage})`);
  assert.ok(d.errorMessage.length > 0, `${what}: errorMessage says why`);
}

describe("URL uploads with private addresses allowed", { timeout: 180_000 }, () => {
  const MAX = MiB;
  const MAX_ATTEMPTS = 2;
  let p: Pipeline;
  let web: LocalWeb;
  let pdf: Buffer;
  let exact: Buffer;

  before(async () => {
    pdf = await readFile(PDF_FIXTURE);
    assert.ok(pdf.length < MAX);
    // exactly MAX bytes that look like a PDF: the fixture, then padding after %%EOF
    exact = Buffer.concat([pdf, Buffer.alloc(MAX - pdf.length, "\n")]);
    web = await startLocalWeb("127.0.0.1", (req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      switch (path) {
        case "/doc.pdf":
          return void res.writeHead(200, { "content-type": "application/pdf" }).end(pdf);
        case "/idle.pdf":
          // headers, then nothing, ever
          res.writeHead(200, { "content-type": "application/pdf" });
          return void res.flushHeaders();
        case "/trickle.pdf": {
          // a byte now and then: never idle long enough for the idle rule
          res.writeHead(200, { "content-type": "application/pdf" });
          const timer = setInterval(() => res.write("%"), 200);
          return void res.on("close", () => clearInterval(timer));
        }
        case "/endless.pdf": {
          // no content-length; streams until the client goes away
          res.writeHead(200, { "content-type": "application/pdf" });
          const chunk = Buffer.alloc(64 * 1024, "%");
          const pump = (): void => {
            while (!res.destroyed && res.write(chunk));
            if (!res.destroyed) res.once("drain", pump);
          };
          return void pump();
        }
        case "/over.pdf":
          return void res.writeHead(200, { "content-type": "application/pdf", "content-length": MAX + 1 }).end(Buffer.alloc(MAX + 1, "%"));
        case "/over-chunked.pdf":
          // the same size, but undeclared: the cut happens while reading
          res.writeHead(200, { "content-type": "application/pdf" });
          res.write(exact);
          return void res.end(Buffer.from("%"));
        case "/exact.pdf":
          return void res.writeHead(200, { "content-type": "application/pdf", "content-length": MAX }).end(exact);
        case "/exact-chunked.pdf":
          res.writeHead(200, { "content-type": "application/pdf" });
          return void res.end(exact);
        default:
          return void res.writeHead(404).end("not here");
      }
    });
    p = await Pipeline.start({
      officeTimeoutMs: 15_000,
      allowPrivate: true,
      // the rate window is longer than the idle limit, so /idle.pdf still meets the idle rule first
      fetch: { maxBytes: MAX, connectTimeoutMs: 2000, idleTimeoutMs: 1000, totalTimeoutMs: 15_000, minBytesPerSecond: 1000, rateWindowMs: 1500 },
      maxAttempts: MAX_ATTEMPTS,
      retryBaseMs: 50,
      retryMaxMs: 200,
    });
  });
  after(async () => {
    await p?.close();
    await web?.close();
  });

  test("a PDF served from 127.0.0.1 ends in A", async () => {
    const d = await p.uploadAndSettle(`${web.base}/doc.pdf`);
    assert.equal(d.state, "A", d.errorMessage);
    assert.equal(d.pageCount, 1);
  });

  test("404 ends in F with errorCode 1", async () => {
    assertFetchFailure(await p.uploadAndSettle(`${web.base}/missing.pdf`), "404");
  });

  test("a server that sends headers then nothing ends in F 1, after the retries", async () => {
    const before = web.requests.filter((r) => r === "/idle.pdf").length;
    const d = await p.uploadAndSettle(`${web.base}/idle.pdf`);
    assertFetchFailure(d, "idle");
    // the idle timeout is transient: every attempt fetched again
    assert.equal(web.requests.filter((r) => r === "/idle.pdf").length - before, MAX_ATTEMPTS);
  });

  test("a server trickling below the minimum rate ends in F 1 at the first attempt, not retried", async () => {
    const d = await p.uploadAndSettle(`${web.base}/trickle.pdf`);
    assertFetchFailure(d, "trickle");
    assert.match(d.errorMessage, /too slowly/);
    assert.equal(web.requests.filter((r) => r === "/trickle.pdf").length, 1, "fetched once: it would be as slow again");
  });

  test("an endless body is cut and ends in F 1", async () => {
    assertFetchFailure(await p.uploadAndSettle(`${web.base}/endless.pdf`), "endless");
  });

  test("a body of maxBytes + 1 ends in F 1, declared or not", async () => {
    assertFetchFailure(await p.uploadAndSettle(`${web.base}/over.pdf`), "maxBytes + 1 with content-length");
    assertFetchFailure(await p.uploadAndSettle(`${web.base}/over-chunked.pdf`), "maxBytes + 1 chunked");
  });

  test("a body of exactly maxBytes is not refused for size", async () => {
    for (const path of ["/exact.pdf", "/exact-chunked.pdf"]) {
      const d = await p.uploadAndSettle(`${web.base}${path}`);
      assert.ok(d.state === "A" || d.state === "F", path);
      assert.notEqual(d.errorCode, 1, `${path}: ${d.state} ${d.errorCode} ${d.errorMessage}`);
    }
  });
});

describe("URL uploads with private addresses refused", { timeout: 180_000 }, () => {
  let p: Pipeline;
  let web: LocalWeb;

  before(async () => {
    web = await startLocalWeb("127.0.0.1", (_req, res) => void res.writeHead(200, { "content-type": "application/pdf" }).end("%PDF-1.4\n"));
    p = await Pipeline.start({ officeTimeoutMs: 15_000, allowPrivate: false, fetch: { connectTimeoutMs: 2000, idleTimeoutMs: 2000, totalTimeoutMs: 10_000 } });
  });
  after(async () => {
    await p?.close();
    await web?.close();
  });

  test("loopback, unspecified, mapped, numeric-form, link-local and localhost addresses end in F 1 without a request", async () => {
    const port = web.port;
    const urls = [
      `http://127.0.0.1:${port}/x.pdf`,
      `http://0.0.0.0:${port}/x.pdf`,
      `http://[::1]:${port}/x.pdf`,
      `http://[::ffff:127.0.0.1]:${port}/x.pdf`,
      `http://2130706433:${port}/x.pdf`,
      `http://0177.0.0.1:${port}/x.pdf`,
      `http://0x7f.0.0.1:${port}/x.pdf`,
      "http://169.254.169.254/latest/meta-data",
      `http://localhost:${port}/x.pdf`,
    ];
    const ids = new Map<string, string>();
    for (const url of urls) ids.set(url, await p.upload(url));
    for (const [url, id] of ids) {
      const d = await p.settled(id);
      assertFetchFailure(d, url);
      assert.match(d.errorMessage, /not allowed/, `${url}: refused as an address, not as a network error`);
    }
    assert.deepEqual(web.requests, [], "the local server saw no request");
  });

  test("a name that does not exist ends with the same message as a private address (internal DNS cannot be probed)", async () => {
    const missing = await p.uploadAndSettle("http://no-such-host.invalid/x.pdf");
    const internal = await p.uploadAndSettle(`http://localhost:${web.port}/x.pdf`);
    assertFetchFailure(missing, "no such host");
    assertFetchFailure(internal, "localhost");
    assert.equal(missing.errorMessage, internal.errorMessage);
  });
});

describe("URL uploads redirected from an allowed address to a private one", { timeout: 180_000 }, () => {
  let p: Pipeline;
  let first: LocalWeb;
  let second: LocalWeb;
  let pdf: Buffer;

  before(async () => {
    pdf = await readFile(PDF_FIXTURE);
    second = await startLocalWeb("127.0.0.2", (_req, res) => void res.writeHead(200, { "content-type": "application/pdf" }).end(pdf));
    first = await startLocalWeb("127.0.0.1", (req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/to-private.pdf") return void res.writeHead(302, { location: `${second.base}/x.pdf` }).end();
      if (path === "/to-allowed.pdf") return void res.writeHead(302, { location: "/doc.pdf" }).end();
      if (path === "/doc.pdf") return void res.writeHead(200, { "content-type": "application/pdf" }).end(pdf);
      res.writeHead(404).end();
    });
    p = await Pipeline.start({
      officeTimeoutMs: 15_000,
      allowPrivate: false,
      // TEST ONLY hook: 127.0.0.1 plays the public first hop, every other address stays refused
      fetch: { isAllowedAddress: (ip) => ip === "127.0.0.1", connectTimeoutMs: 2000, idleTimeoutMs: 2000, totalTimeoutMs: 10_000 },
    });
  });
  after(async () => {
    await p?.close();
    await first?.close();
    await second?.close();
  });

  test("control: a redirect between allowed addresses is followed and ends in A", async () => {
    const d = await p.uploadAndSettle(`${first.base}/to-allowed.pdf`);
    assert.equal(d.state, "A", d.errorMessage);
    assert.deepEqual(first.requests, ["/to-allowed.pdf", "/doc.pdf"]);
  });

  test("a redirect to 127.0.0.2 ends in F 1 and 127.0.0.2 sees no request", async () => {
    const d = await p.uploadAndSettle(`${first.base}/to-private.pdf`);
    assertFetchFailure(d, "redirect to 127.0.0.2");
    assert.match(d.errorMessage, /not allowed/);
    assert.ok(first.requests.includes("/to-private.pdf"), "the allowed first hop was fetched");
    assert.deepEqual(second.requests, [], "the private second hop saw no request");
  });
});
