import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { NewCredentials } from "../../src/accounts/account-admin.ts";
import { openStore } from "../../src/store/open-store.ts";
import { formEncode, sign } from "../helpers/api-client.ts";
import { closing, fields, newBoundary, partHead, signedUpload } from "../helpers/multipart.ts";
import { prepareDataDir, startServerProcess, type QuireProcess } from "../helpers/server-process.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Issue 7, load: 1,000 concurrent url_upload requests and 50 concurrent 10 MB file uploads
 * against a `quire serve` process. Every request is answered ok and recorded, none lost. Latency
 * and throughput are printed, never asserted (they depend on the machine and its load).
 */

const URL_UPLOADS = 1000;
const FILE_UPLOADS = 50;
const FILE_BYTES = 10 * 1024 * 1024;

interface Answer {
  ms: number;
  documentId: string | undefined;
  text: string;
}

function send(agent: Agent, url: string, headers: Record<string, string | number>, body: Buffer | undefined, method = "POST"): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const m = /"documentId":"([^"]+)"/.exec(text);
        resolve({ ms: performance.now() - started, documentId: /"stat":"ok"/.test(text) ? m?.[1] : undefined, text });
      });
    });
    req.setTimeout(120_000, () => req.destroy(new Error("no answer in 120 s")));
    req.on("error", reject);
    req.end(body);
  });
}

function figures(label: string, answers: Answer[], wallMs: number, bytes = 0): string {
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(0);
  const rate = (answers.length / wallMs) * 1000;
  const mb = bytes > 0 ? `, ${((bytes / 1048576 / wallMs) * 1000).toFixed(1)} MiB/s` : "";
  return `load: ${answers.length} ${label} in ${(wallMs / 1000).toFixed(2)} s — p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, ${rate.toFixed(0)} requests/s${mb}`;
}

describe("load against a running server", { timeout: 170_000 }, () => {
  let dataDir: string;
  let account: NewCredentials;
  let server: QuireProcess;
  before(async () => {
    ({ dataDir, account } = await prepareDataDir());
    server = await startServerProcess(dataDir, { QUIRE_RATE_PER_SECOND: "0" });
  });
  after(async () => {
    await server?.kill("SIGTERM");
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  async function recorded(ids: string[]): Promise<number> {
    const store = await openStore(join(dataDir, "quire.db"));
    try {
      const rows = await dbOf(store).selectFrom("documents").select("documentId").where("documentId", "in", ids).execute();
      return new Set(rows.map((r) => r.documentId)).size;
    } finally {
      await store.close();
    }
  }

  test(`${URL_UPLOADS} concurrent url_upload requests: all answered ok, all recorded`, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: URL_UPLOADS });
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: URL_UPLOADS }, (_, i) => {
        const body = Buffer.from(formEncode(sign({ action: "svc.document.url_upload", apiKey: account.apiKey, format: "json", slurpUrl: `https://example.com/load/${i}.pdf`, title: `load ${i}` }, account.apiSecret)));
        return send(agent, `${server.url}/1_0`, { "content-type": "application/x-www-form-urlencoded", "content-length": body.length }, body);
      }),
    );
    const wall = performance.now() - started;
    agent.destroy();
    const failed = answers.filter((a) => a.documentId === undefined);
    assert.deepEqual(failed.map((a) => a.text).slice(0, 3), [], "every request is answered ok");
    assert.equal(await recorded(answers.map((a) => a.documentId!)), URL_UPLOADS, "every accepted document is recorded");
    console.log(figures("concurrent url_upload requests", answers, wall));
  });

  test(`${FILE_UPLOADS} concurrent 10 MB uploads: all answered ok, all recorded with their size`, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: FILE_UPLOADS });
    const file = Buffer.alloc(FILE_BYTES, 0x20);
    file.write("%PDF-1.4\n%", 0);
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: FILE_UPLOADS }, (_, i) => {
        const boundary = newBoundary();
        const head = Buffer.concat(
          fields(signedUpload(account, { title: `big ${i}`, format: "json" })).map((p) => Buffer.concat([partHead(boundary, p), Buffer.from(p.value as string), Buffer.from("\r\n")])),
        );
        const body = Buffer.concat([head, partHead(boundary, { name: "file", filename: `big-${i}.pdf` }), file, closing(boundary)]);
        return send(agent, `${server.url}/upload/1_0`, { "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": body.length }, body);
      }),
    );
    const wall = performance.now() - started;
    agent.destroy();
    const failed = answers.filter((a) => a.documentId === undefined);
    assert.deepEqual(failed.map((a) => a.text).slice(0, 3), [], "every upload is answered ok");
    const ids = answers.map((a) => a.documentId!);
    assert.equal(await recorded(ids), FILE_UPLOADS, "every accepted upload is recorded");
    const store = await openStore(join(dataDir, "quire.db"));
    try {
      const sizes = await dbOf(store).selectFrom("documents").select("originalSize").where("documentId", "in", ids).execute();
      assert.ok(sizes.every((s) => s.originalSize === FILE_BYTES), "each original is stored whole");
    } finally {
      await store.close();
    }
    console.log(figures("concurrent 10 MB uploads", answers, wall, FILE_UPLOADS * FILE_BYTES));
  });
});
