import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { blobKeys } from "../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../src/client/quire-client.ts";
import { FIXTURES, PROJECT_ROOT } from "./helpers/paths.ts";
import { startTestServer, type TestServer } from "./helpers/test-server.ts";

/** A real `quire worker` process on the test server's store and blobs. */
function startWorkerProcess(server: TestServer): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "worker"], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      QUIRE_DATA_DIR: server.dataDir,
      QUIRE_LOG_LEVEL: "silent",
      QUIRE_JOB_LEASE_SECONDS: "3",
      QUIRE_WORKER_CONCURRENCY: "1",
      QUIRE_OFFICE_SLOTS: "1",
    },
    stdio: "ignore",
  });
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

describe("a worker killed with SIGKILL in the middle of a conversion", { timeout: 180_000 }, () => {
  let server: TestServer;
  const workers: ChildProcess[] = [];
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    for (const w of workers) {
      w.kill("SIGTERM");
      await exited(w);
    }
    await server?.close();
  });

  test("the document still reaches A, once", async () => {
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const doc = unwrap(await client.upload(join(FIXTURES, "odp-symphony-100slides.odp"))).document as { documentId: string };
    const store = server.services.store;

    const first = startWorkerProcess(server);
    workers.push(first);
    for (let i = 0; ; i++) {
      const [job] = await store.jobs.getForDocument(doc.documentId);
      if (job?.state === "running") break;
      assert.ok(i < 600, "the first worker never took the job");
      await sleep(50);
    }
    await sleep(1500); // well inside the conversion (LibreOffice, then 100 pages to render)
    assert.equal((await store.documents.getForConversion(doc.documentId))!.state, "P", "killed before it finished");
    first.kill("SIGKILL");
    await exited(first);

    workers.push(startWorkerProcess(server));
    let final;
    for (let i = 0; ; i++) {
      final = (await store.documents.getForConversion(doc.documentId))!;
      if (final.state !== "P") break;
      assert.ok(i < 1800, "the document never left P");
      await sleep(100);
    }
    assert.equal(final.state, "A", final.errorMessage);
    assert.equal(final.pageCount, 100);

    // The worker publishes the document, then marks its job done: a moment apart.
    let jobs = await store.jobs.getForDocument(doc.documentId);
    for (let i = 0; jobs[0]?.state === "running" && i < 600; i++) {
      await sleep(100);
      jobs = await store.jobs.getForDocument(doc.documentId);
    }
    assert.equal(jobs.length, 1, "one job, taken over rather than duplicated");
    assert.equal(jobs[0]!.state, "done");
    assert.equal(jobs[0]!.attempts, 2, "run by the killed worker, then once more");

    const keys = await server.services.blobs.list(blobKeys.prefix(final.blobId));
    assert.equal(keys.filter((k) => k.includes("/pages/read/")).length, 100, "each page image once");
    assert.equal(keys.filter((k) => k.includes("/pages/thumb/")).length, 100);
  });
});
