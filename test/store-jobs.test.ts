import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds } from "../src/domain/document.ts";
import type { Store } from "../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "./helpers/dialects.ts";

const pgSkip = await postgresUnavailable();
const LEASE = 30_000;

for (const dialect of DIALECTS) {
  describe(`job queue on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let accountId: number;
    before(async () => {
      ({ store, drop } = await dialect.open());
      accountId = (await store.accounts.createWithKey("jobs", "j".repeat(32), "s".repeat(32), 1))!;
    });
    after(async () => drop?.());

    async function enqueue(createdAt: number): Promise<string> {
      const doc = buildNewDocument(
        newDocumentIds(createdAt),
        { accountId, username: "jobs", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
        { name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [] },
        createdAt,
      );
      await store.documents.insertWithJob(doc, "convert-document");
      return doc.documentId;
    }

    async function drain(now: number): Promise<void> {
      for (;;) {
        const job = await store.jobs.claimNext("drainer", now, LEASE);
        if (!job) return;
        await store.jobs.finish(job.id, "drainer", now, { state: "done" });
      }
    }

    test("claims the oldest due job once; a lease that runs out lets another worker take it", async () => {
      const t0 = 1_000_000;
      const older = await enqueue(t0);
      await enqueue(t0 + 5);
      const job = await store.jobs.claimNext("w1", t0 + 10, LEASE);
      assert.equal(job?.documentId, older);
      assert.equal(job?.attempts, 1);
      assert.equal(job?.state, "running");

      const next = await store.jobs.claimNext("w2", t0 + 10, LEASE);
      assert.notEqual(next?.id, job!.id, "a held job is not handed out again");

      assert.equal(await store.jobs.heartbeat(job!.id, "w2", t0 + 20, LEASE), false, "only the holder renews");
      assert.equal(await store.jobs.heartbeat(job!.id, "w1", t0 + 20, LEASE), true);
      // w1 dies: after its lease, w3 takes the job over and w1 can no longer finish it
      const taken = await store.jobs.claimNext("w3", t0 + 20 + LEASE + 1, LEASE);
      assert.equal(taken?.id, job!.id);
      assert.equal(taken?.attempts, 2);
      assert.equal(await store.jobs.finish(job!.id, "w1", t0 + LEASE * 2, { state: "done" }), false);
      assert.equal(await store.jobs.finish(job!.id, "w3", t0 + LEASE * 2, { state: "done" }), true);
      await drain(t0 + LEASE * 3);
    });

    test("a retry waits for its time; done and failed jobs are never claimed", async () => {
      const t0 = 2_000_000;
      await enqueue(t0);
      const job = (await store.jobs.claimNext("w", t0, LEASE))!;
      await store.jobs.finish(job.id, "w", t0, { state: "queued", retryAt: t0 + 5000, error: "network" });
      assert.equal(await store.jobs.claimNext("w", t0 + 4999, LEASE), undefined);
      const again = (await store.jobs.claimNext("w", t0 + 5000, LEASE))!;
      assert.equal(again.id, job.id);
      assert.equal(again.lastError, "network");
      await store.jobs.finish(again.id, "w", t0 + 5000, { state: "failed", error: "corrupt" });
      assert.equal(await store.jobs.claimNext("w", t0 + 10 * LEASE, LEASE), undefined);
    });

    test("many concurrent claimers never take the same job twice", async () => {
      const t0 = 3_000_000;
      for (let i = 0; i < 12; i++) await enqueue(t0 + i);
      const claims = await Promise.all(Array.from({ length: 30 }, (_, i) => store.jobs.claimNext(`w${i}`, t0 + 100, LEASE)));
      const ids = claims.filter((c) => c !== undefined).map((c) => c!.id);
      assert.equal(ids.length, 12);
      assert.equal(new Set(ids).size, 12);
    });
  });
}
