import assert from "node:assert/strict";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { LocalBlobStore } from "../../src/blobs/local-blob-store.ts";
import type { NewCredentials } from "../../src/accounts/account-admin.ts";
import { sweepOrphanBlobs } from "../../src/jobs/orphan-sweep.ts";
import { openStore } from "../../src/store/open-store.ts";
import { rm } from "node:fs/promises";
import { rawHttp } from "../helpers/api-client.ts";
import { closing, newBoundary, partHead, signedUpload, fields } from "../helpers/multipart.ts";
import { seededRandom } from "../helpers/seeded-random.ts";
import { soak } from "../helpers/soak.ts";
import { prepareDataDir, startServerProcess, type QuireProcess } from "../helpers/server-process.ts";
import { listFiles } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Issue 7, crashes: an API server process (`quire serve --no-worker`) is
 * killed with SIGKILL at seeded random points while uploads stream in (8 times; 20 in a soak run). Every upload
 * answered stat=ok must be recorded once with its original; none may be recorded twice; after the
 * orphan clean-up pass no blob is left that no record owns.
 */

const KILLS = soak(20, 8);
const WAVE = 4;
const UPLOADS_PER_ROUND = 6;
const SEED = Number(process.env.QUIRE_CRASH_SEED ?? 7);
// A real PDF header and trailer around 192 KiB of comment: detected as PDF, sent in several chunks.
const PDF = Buffer.concat([
  Buffer.from("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"),
  Buffer.from(`%${"x".repeat(192 * 1024)}\n`),
  Buffer.from("trailer<</Root 1 0 R>>\n%%EOF\n"),
]);

interface Outcome {
  title: string;
  documentId?: string;
}

/** One upload whose body goes out in 8 pieces a few ms apart, so a kill can land anywhere in it. */
async function upload(url: string, account: NewCredentials, title: string): Promise<Outcome> {
  const boundary = newBoundary();
  const head = Buffer.concat(fields(signedUpload(account, { title, format: "json" })).map((p) => Buffer.concat([partHead(boundary, p), Buffer.from(p.value as string), Buffer.from("\r\n")])));
  const fileHead = partHead(boundary, { name: "file", filename: `${title}.pdf` });
  const body = Buffer.concat([head, fileHead, PDF, closing(boundary)]);
  async function* pieces() {
    const piece = Math.ceil(body.length / 8);
    for (let i = 0; i < body.length; i += piece) {
      yield body.subarray(i, i + piece);
      await sleep(5);
    }
  }
  const target = new URL(url);
  try {
    const res = await rawHttp(target.origin, {
      method: "POST",
      path: "/upload/1_0",
      headers: [["Content-Type", `multipart/form-data; boundary=${boundary}`], ["Content-Length", String(body.length)]],
      body: pieces(),
    });
    const rsp = (JSON.parse(res.body) as { rsp: { stat: string; _content?: { document?: { documentId: string } } } }).rsp;
    return { title, documentId: rsp.stat === "ok" ? rsp._content?.document?.documentId : undefined };
  } catch {
    return { title }; // killed before answering (or half an answer): not accepted
  }
}

describe("SIGKILL of the server during uploads", { timeout: 170_000 }, () => {
  let dataDir: string;
  let account: NewCredentials;
  const running: QuireProcess[] = [];
  before(async () => {
    ({ dataDir, account } = await prepareDataDir());
  });
  after(async () => {
    for (const p of running) await p.kill();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test(`${KILLS} kills at random points: no accepted upload lost or duplicated, no orphan after the clean-up`, async () => {
    const random = seededRandom(SEED);
    const outcomes: Outcome[] = [];
    // Servers start in waves over the same store and blobs (as several API processes would run),
    // so the start-ups overlap; each is killed at its own random point.
    for (let wave = 0; wave < KILLS / WAVE; wave++) {
      const servers = await Promise.all(Array.from({ length: WAVE }, () => startServerProcess(dataDir, { QUIRE_RATE_PER_SECOND: "0" })));
      running.push(...servers);
      const rounds = servers.map(async (server, s) => {
        const round = wave * WAVE + s;
        const pending = Array.from({ length: UPLOADS_PER_ROUND }, (_, i) => upload(server.url, account, `r${round}u${i}`));
        // From just after the first bytes to past the first answers, even on a loaded machine where a
        // fresh server takes a second to answer: some kills land mid-upload, some after answers.
        await sleep(20 + random() * 1500);
        await server.kill("SIGKILL");
        return Promise.all(pending);
      });
      for (const answers of await Promise.all(rounds)) outcomes.push(...answers);
    }

    const accepted = outcomes.filter((o) => o.documentId !== undefined);
    const store = await openStore(join(dataDir, "quire.db"));
    try {
      const rows = await dbOf(store).selectFrom("documents").select(["documentId", "title", "blobId"]).execute();
      const blobs = new LocalBlobStore(join(dataDir, "blobs"));
      for (const a of accepted) {
        const matching = rows.filter((r) => r.title === a.title);
        assert.equal(matching.length, 1, `accepted upload ${a.title} is recorded exactly once`);
        assert.equal(matching[0]!.documentId, a.documentId);
        assert.ok(await blobs.exists(blobKeys.original(matching[0]!.blobId)), `the original of ${a.title} is stored`);
      }
      assert.equal(new Set(rows.map((r) => r.title)).size, rows.length, "no upload is recorded twice");

      // Everything left behind is past any grace period once the clean-up looks from the future.
      const before = await listFiles(blobs.root);
      const report = await sweepOrphanBlobs({ blobs, references: store.blobReferences, log: pino({ level: "silent" }), graceMs: 0, now: () => Date.now() + 1000 });
      const left = await listFiles(blobs.root);
      const owned = new Set(rows.map((r) => r.blobId));
      assert.deepEqual(left.filter((f) => !owned.has(f.split("/")[1] ?? "")), [], "every blob left belongs to a record; no spool file is left");
      for (const r of rows) assert.ok(left.includes(blobKeys.original(r.blobId)), "the clean-up keeps every recorded original");
      console.log(
        `crash (server): ${KILLS} SIGKILLs (seed ${SEED}), ${outcomes.length} uploads started, ${accepted.length} accepted and all recorded once, ` +
          `${rows.length} records in all; the clean-up removed ${report.orphanFolders} orphan folders and ${report.staleTemp} spool files of ${before.length} files`,
      );
      assert.ok(accepted.length > 0 && accepted.length < outcomes.length, "kills landed both after and before answers");
    } finally {
      await store.close();
    }
  });
});
