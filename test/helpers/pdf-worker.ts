import { spawn, type ChildProcess } from "node:child_process";
import { PROJECT_ROOT, tsEntryArgs } from "./paths.ts";
import type { TestServer } from "./test-server.ts";

export interface PdfWorker {
  child: ChildProcess;
  /** Settles once the child takes jobs; rejects if it exits first. */
  ready: Promise<void>;
}

/**
 * `quire worker`'s role without LibreOffice (pdf-worker-child.ts), over a test server's data
 * folder and store, for the tests that SIGKILL workers: short leases and one slot unless `env`
 * says otherwise.
 */
export function startPdfWorker(server: Pick<TestServer, "dataDir">, env: Record<string, string> = {}): PdfWorker {
  const child = spawn(process.execPath, tsEntryArgs("test/helpers/pdf-worker-child.ts"), {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      QUIRE_DATA_DIR: server.dataDir,
      QUIRE_LOG_LEVEL: "silent",
      QUIRE_JOB_LEASE_SECONDS: "2",
      QUIRE_WORKER_CONCURRENCY: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => (d.toString().includes("ready") ? resolve() : undefined));
    child.once("exit", () => reject(new Error("worker child exited before it was ready")));
  });
  ready.catch(() => undefined); // a test that kills it before it is ready need not wait for it
  return { child, ready };
}
