import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { zipBombOdt } from "./hostile-files.ts";
import { FIXTURES } from "./paths.ts";
import { startTestServer, type TestServer } from "./test-server.ts";
import { startTestWorker, type TestWorker, type TestWorkerOptions } from "./test-worker.ts";
import { dbOf } from "./store-db.ts";

/**
 * Issue 11 item 3's scenario, for test/system/fairness-accounts.test.ts and `npm run bench -- fairness`:
 * one account ("hostile") queues URL uploads of a server that trickles a byte now and then and
 * office files that are zip bombs; another ("victim") uploads a one-page PDF.
 */
export interface FairnessRig {
  server: TestServer;
  /**
   * Starts the conversion worker (the rig starts without one): after queueHostileLoad, so that the
   * hostile account's whole queue is in place before any of it is converted. Queueing 30 uploads
   * took seconds on a busy machine, and a worker already running drained a third of the queue
   * meanwhile, so how full the queue still was when the victim came depended on the machine.
   */
  startWorker(): Promise<void>;
  hostile: { client: QuireClient; accountId: number };
  victim: { client: QuireClient; accountId: number };
  /** Base URL of the trickling server: every path answers 200 and one byte per `trickleEveryMs`. */
  trickleBase: string;
  close(): Promise<void>;
}

export const VICTIM_PDF = join(FIXTURES, "pdf-quartz-firefox-1page.pdf");

export async function startFairnessRig(workerOpts: TestWorkerOptions, trickleEveryMs = 500): Promise<FairnessRig> {
  const server = await startTestServer({ QUIRE_RATE_PER_SECOND: "0" });
  const trickle = await startTrickleServer(trickleEveryMs);
  let worker: TestWorker | undefined;
  const account = async (name: string) => {
    const c = await createAccount(server.services.store, name);
    const client = new QuireClient({ baseUrl: server.url, apiKey: c.apiKey, apiSecret: c.apiSecret });
    const row = await dbOf(server.services.store).selectFrom("accounts").select("id").where("username", "=", name).executeTakeFirstOrThrow();
    return { client, accountId: row.id };
  };
  const hostile = await account("hostile");
  const victim = await account("victim");
  return {
    server,
    async startWorker() {
      worker ??= await startTestWorker(server, { allowPrivate: true, ...workerOpts });
    },
    hostile,
    victim,
    trickleBase: trickle.base,
    async close() {
      await worker?.stop();
      await trickle.close();
      await server.close();
    },
  };
}

/** The hostile account's queue: `slowUrls` URL uploads of the trickling server, then `bombs` zip-bomb .odt files. */
export async function queueHostileLoad(rig: FairnessRig, slowUrls: number, bombs: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < slowUrls; i++) {
    const answer = unwrap(await rig.hostile.client.call("document.url_upload", { slurpUrl: `${rig.trickleBase}/slow-${i}.pdf` }));
    ids.push((answer.document as { documentId: string }).documentId);
  }
  const dir = await mkdtemp(join(tmpdir(), "quire-fairness-"));
  try {
    const bomb = join(dir, "bomb.odt");
    await writeFile(bomb, await zipBombOdt(512));
    for (let i = 0; i < bombs; i++) {
      const answer = unwrap(await rig.hostile.client.upload(bomb, { title: `bomb ${i}` }));
      ids.push((answer.document as { documentId: string }).documentId);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return ids;
}

export async function uploadVictimPdf(rig: FairnessRig, title = "victim"): Promise<string> {
  const answer = unwrap(await rig.victim.client.upload(VICTIM_PDF, { title }));
  return (answer.document as { documentId: string }).documentId;
}

/** Jobs of an account by state, from the durable queue itself. */
export async function jobsOf(rig: FairnessRig, accountId: number): Promise<{ queued: number; running: number }> {
  const rows = await dbOf(rig.server.services.store)
    .selectFrom("jobs")
    .select(["state", (eb) => eb.fn.countAll<number>().as("n")])
    .where("accountId", "=", accountId)
    .groupBy("state")
    .execute();
  const count = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
  return { queued: count("queued"), running: count("running") };
}

/** Polls until the document leaves P, calling `onTick` at each poll; the final state and the ms it took. */
export async function untilSettled(rig: FairnessRig, documentId: string, guardMs: number, onTick?: () => Promise<void>): Promise<{ state: string; ms: number; errorMessage: string }> {
  const started = performance.now();
  for (;;) {
    await onTick?.();
    const doc = await rig.server.services.store.documents.getForConversion(documentId);
    if (doc && doc.state !== "P") return { state: doc.state, ms: performance.now() - started, errorMessage: doc.errorMessage };
    if (performance.now() - started > guardMs) throw new Error(`${documentId} stayed in P for ${guardMs} ms`);
    await sleep(25);
  }
}

async function startTrickleServer(everyMs: number): Promise<{ base: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/pdf" });
    const timer = setInterval(() => res.write("%"), everyMs);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    base: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
