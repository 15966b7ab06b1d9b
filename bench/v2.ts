/**
 * The v2 API against v1 on the same documents, in the same run (issue 28):
 *
 * 1. Reads: `GET /v2/publications` (10 a page) and `GET /v2/publications/{slug}` against v1's
 *    signed `svc.documents.list` (10 a page, JSON), over the same 1,000 published documents;
 *    requests per second in rounds taken in turn, each figure as a ratio to v1's list (wanted ≥ 0.9).
 * 2. Time to readable: a PDF uploaded through v1 (`svc.document.upload`, published when converted)
 *    against the same file through v2 as the TS SDK does it (create a draft, upload, poll the draft
 *    until DONE, publish), each until its first page image loads at its public address; medians,
 *    as a ratio v1 / v2 (wanted ≥ 0.95).
 *
 * `npm run bench -- v2`.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import pino from "pino";
import { startApiRole } from "../src/api-role.ts";
import { createAccount, createToken } from "../src/accounts/account-admin.ts";
import { QuireClient, unwrap } from "../src/client/quire-client.ts";
import { loadConfig } from "../src/config.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../src/domain/document.ts";
import { openServices } from "../src/services.ts";
import { startWorkerRole } from "../src/worker-role.ts";
import { FIXTURES } from "./bench-common.ts";
import { dbOf } from "../test/helpers/store-db.ts";
import { sandboxSettings } from "../src/convert/sandbox.ts";

const DOCUMENTS = 1000;
const CONNECTIONS = 10;
const WARMUP_S = 2;
const ROUNDS = 7;
const ROUND_S = 2;
const UPLOADS = 11;
const PDF = "pdf-quartz-firefox-1page.pdf";

function signedQuery(secret: string, params: Record<string, string>): string {
  const names = Object.keys(params).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const signature = createHash("md5").update(secret + names.map((n) => n + params[n]).join("")).digest("hex");
  return new URLSearchParams({ ...params, signature }).toString();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function round(url: string, headers: Record<string, string>, seconds: number): Promise<number> {
  const r = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds, workers: 1 });
  if (r.errors > 0 || r.non2xx > 0 || r.timeouts > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts`);
  return r.requests.average;
}

async function until(cond: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(20);
  }
}

export async function benchV2(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "quire-bench-v2-"));
  const config = loadConfig({ QUIRE_DATA_DIR: dataDir, QUIRE_LOG_LEVEL: "silent", QUIRE_RATE_BURST: "1000000", QUIRE_RATE_PER_SECOND: "1000000" });
  const services = await openServices(config);
  const log = pino({ level: "silent" });
  let role: Awaited<ReturnType<typeof startApiRole>> | undefined;
  let stopWorker: (() => Promise<void>) | undefined;
  try {
    const account = await createAccount(services.store, "bench");
    const owner = (await services.store.accounts.getKeyOwnerForSigning(account.apiKey))!;
    const token = await createToken(services.store, "bench");
    let someSlug = "";
    for (let i = 0; i < DOCUMENTS; i++) {
      const now = Date.now() - DOCUMENTS + i;
      const doc = buildNewDocument(
        newDocumentIds(now),
        { accountId: owner.accountId, username: "bench", origin: "apiupload", orgDocType: "pdf", orgDocName: `report-${i}.pdf`, defaultTitle: `Report ${i}`, slurpUrl: "", originalSize: 1000, blobId: newBlobId() },
        {
          name: `report-${i}`, title: undefined, tags: ["bench"], commentsAllowed: true, description: `A document of the benchmark, number ${i}.`,
          downloadable: false, infoLink: "", language: "en", access: "public", explicit: false, category: "007000", type: "009000",
          ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
        },
        now,
      );
      await services.store.documents.insertWithJob(doc, "convert-document");
      await services.store.documents.markActive(doc.documentId, { pageCount: 3, coverWidth: 600, coverHeight: 800, description: undefined, name: undefined }, now);
      someSlug = doc.documentId;
    }
    // The seeded documents' jobs are done: only the uploads below are converted.
    await dbOf(services.store).deleteFrom("jobs").execute();
    role = await startApiRole({ config, services, listen: { host: "127.0.0.1", port: 0 }, logger: false });
    const base = role.address;
    const bearer = { Authorization: `Bearer ${token}` };
    const v1List = `${base}/1_0?${signedQuery(account.apiSecret, { action: "svc.documents.list", apiKey: account.apiKey, format: "json", pageSize: "10" })}`;
    const v2List = `${base}/v2/publications?page=1&size=10`;
    const v2Get = `${base}/v2/publications/${someSlug}`;
    const check = await (await fetch(v2List, { headers: bearer })).json() as { count: number };
    if (check.count !== DOCUMENTS) throw new Error(`v2 sees ${check.count} publications`);

    const urls: Array<[string, Record<string, string>]> = [[v1List, {}], [v2List, bearer], [v2Get, bearer]];
    for (const [u, h] of urls) await round(u, h, WARMUP_S);
    const rps: number[][] = urls.map(() => []);
    // Each round starts with another of the three, so that none always follows the same one.
    for (let i = 0; i < ROUNDS; i++) {
      for (let j = 0; j < urls.length; j++) {
        const k = (i + j) % urls.length;
        const [u, h] = urls[k]!;
        rps[k]!.push(await round(u, h, ROUND_S));
      }
    }
    const ratio = (k: number) => median(rps[k]!.map((r, i) => r / rps[0]![i]!));
    process.stdout.write(`reads over ${DOCUMENTS} published documents; ${CONNECTIONS} connections; ${ROUNDS} rounds of ${ROUND_S} s in turn; medians\n`);
    process.stdout.write(`  v1 svc.documents.list (10 a page)   ${median(rps[0]!).toFixed(0).padStart(7)} req/s\n`);
    process.stdout.write(`  v2 GET /publications (10 a page)    ${median(rps[1]!).toFixed(0).padStart(7)} req/s   ratio ${ratio(1).toFixed(2)} (wanted >= 0.9)\n`);
    process.stdout.write(`  v2 GET /publications/{slug}         ${median(rps[2]!).toFixed(0).padStart(7)} req/s   ratio ${ratio(2).toFixed(2)} (wanted >= 0.9)\n`);

    // Time to readable, one upload at a time, v1 and v2 in turn.
    await startWorkerRole({
      config: { ...config, metricsPort: undefined }, services, log, officeDir: join(dataDir, "office"), sandbox: sandboxSettings(config), startOffice: false, sweeps: false,
      onStarted: (close) => (stopWorker = close),
    });
    const client = new QuireClient({ baseUrl: base, apiKey: account.apiKey, apiSecret: account.apiSecret });
    const bytes = await readFile(join(FIXTURES, PDF));
    const v1Times: number[] = [];
    const v2Times: number[] = [];
    const viaV1 = async (i: number) => {
      const t = performance.now();
      const up = unwrap(await client.upload(join(FIXTURES, PDF), { title: `v1 ${i}` }));
      const documentId = (up.document as { documentId: string }).documentId;
      // Readable: its first page image loads at its address (the reader page itself answers 200 while processing).
      await until(async () => {
        const doc = await services.store.documents.getForConversion(documentId);
        return doc?.state === "A" && (await fetch(`${base}/bench/docs/${doc.name}/pages/read/1.jpg`)).status === 200;
      }, "v1 readable");
      v1Times.push(performance.now() - t);
    };
    const viaV2 = async (i: number) => {
      const t = performance.now();
      const json = { ...bearer, "Content-Type": "application/json" };
      const draft = await (await fetch(`${base}/v2/drafts`, { method: "POST", headers: json, body: JSON.stringify({ confirmCopyright: true, info: { title: `v2 ${i}`, access: "PUBLIC" } }) })).json() as { slug: string };
      const form = new FormData();
      form.append("file", new Blob([bytes]));
      form.append("confirmCopyright", "true");
      const uploaded = await fetch(`${base}/v2/drafts/${draft.slug}/upload`, { method: "PATCH", headers: bearer, body: form });
      if (uploaded.status !== 200) throw new Error(`v2 upload ${uploaded.status}`);
      await until(async () => ((await (await fetch(`${base}/v2/drafts/${draft.slug}`, { headers: bearer })).json()) as { fileInfo: { conversionStatus: string } }).fileInfo.conversionStatus === "DONE", "v2 DONE");
      const pub = await (await fetch(`${base}/v2/drafts/${draft.slug}/publish`, { method: "POST", headers: json, body: JSON.stringify({ desiredName: `v2-${i}` }) })).json() as { publicLocation: string };
      await until(async () => (await fetch(`${pub.publicLocation}/pages/read/1.jpg`)).status === 200, "v2 readable");
      v2Times.push(performance.now() - t);
    };
    // In turn, each going first in every other pair: what one upload leaves running (its worker's
    // last steps) falls on the other way as often as on its own.
    for (let i = 0; i < UPLOADS; i++) {
      if (i % 2 === 0) {
        await viaV1(i);
        await viaV2(i);
      } else {
        await viaV2(i);
        await viaV1(i);
      }
    }
    const m1 = median(v1Times);
    const m2 = median(v2Times);
    process.stdout.write(`time to readable, ${UPLOADS} uploads of ${PDF} each way, in turn (each way first in every other pair); medians\n`);
    process.stdout.write(`  v1 upload                               ${m1.toFixed(0).padStart(6)} ms\n`);
    process.stdout.write(`  v2 create + upload + poll + publish     ${m2.toFixed(0).padStart(6)} ms   ratio v1/v2 ${(m1 / m2).toFixed(2)} (wanted >= 0.95)\n`);
  } finally {
    await stopWorker?.();
    await role?.close();
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
