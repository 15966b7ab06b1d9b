import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { FastifyInstance } from "fastify";
import { startApiRole } from "../../src/api-role.ts";
import { createAccount, type NewCredentials } from "../../src/accounts/account-admin.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { openServices, type Services } from "../../src/services.ts";
import { dbOf } from "./store-db.ts";

export interface TestServer {
  /** Normal endpoint: `${url}/1_0`. */
  url: string;
  /** Upload endpoint: `${uploadUrl}/1_0`. */
  uploadUrl: string;
  dataDir: string;
  config: Readonly<Config>;
  services: Services;
  account: NewCredentials;
  app: FastifyInstance;
  /** Every file under the blob folder (temp files included), relative to it. */
  listBlobFiles(): Promise<string[]>;
  /** Row counts of documents and jobs. */
  countRecords(): Promise<{ documents: number; jobs: number }>;
  close(): Promise<void>;
}

/** A real server on a free port over a fresh SQLite file and blob folder in a temp dir. */
export async function startTestServer(env: Record<string, string> = {}, overrides: Partial<Config> = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "quire-test-"));
  const config = loadConfig({ QUIRE_DATA_DIR: dataDir, QUIRE_LOG_LEVEL: "silent", ...env }, overrides);
  const services = await openServices(config);
  const account = await createAccount(services.store, "tester");
  // The API role `quire serve` runs (metrics, health checks), without its access log.
  const api = await startApiRole({ config, services, listen: { host: "127.0.0.1", port: 0 }, logger: false });
  const app = api.app;
  const url = api.address;
  return {
    url,
    uploadUrl: `${url}/upload`,
    dataDir,
    config,
    services,
    account,
    app,
    listBlobFiles: () => listFiles(config.blobDir),
    async countRecords() {
      const db = dbOf(services.store);
      const d = await db.selectFrom("documents").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      const j = await db.selectFrom("jobs").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      return { documents: Number(d.n), jobs: Number(j.n) };
    },
    async close() {
      await api.close();
      await services.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(relative(root, p));
    }
  };
  await walk(root);
  return out.sort();
}
