import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import { DISK_WAIT_MARK } from "../../src/domain/job-failure.ts";
import { CONVERT_DOCUMENT, type JobKind } from "../../src/domain/job-kinds.ts";
import type { ClaimRules } from "../../src/store/jobs.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const pgSkip = await postgresUnavailable();
const LEASE = 30_000;
const ANY: ClaimRules = { kinds: [CONVERT_DOCUMENT] };

for (const dialect of DIALECTS) {
  describe(`job queue on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let accountId: number;
    before(async () => {
      ({ store, drop } = await dialect.open());
      accountId = (await seedAccount(store, "jobs", "j".repeat(32), "s".repeat(32), 1));
    });
    after(async () => drop?.());

    async function enqueue(createdAt: number, owner = accountId): Promise<string> {
      const doc = buildNewDocument(
        newDocumentIds(createdAt),
        { accountId: owner, username: "jobs", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
        { name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [] },
        createdAt,
      );
      await store.documents.insertWithJob(doc, "convert-document");
      return doc.documentId;
    }

    async function drain(now: number): Promise<void> {
      for (;;) {
        const job = await store.jobs.claimNext("drainer", now, LEASE, ANY);
        if (!job) return;
        await store.jobs.finish(job.id, "drainer", now, { state: "done" });
      }
    }

    test("claims the oldest due job once; a lease that runs out lets another worker take it", async () => {
      const t0 = 1_000_000;
      const older = await enqueue(t0);
      await enqueue(t0 + 5);
      const job = await store.jobs.claimNext("w1", t0 + 10, LEASE, ANY);
      assert.equal(job?.documentId, older);
      assert.equal(job?.attempts, 1);
      assert.equal(job?.state, "running");

      const next = await store.jobs.claimNext("w2", t0 + 10, LEASE, ANY);
      assert.notEqual(next?.id, job!.id, "a held job is not handed out again");

      assert.equal(await store.jobs.heartbeat(job!.id, "w2", t0 + 20, LEASE), false, "only the holder renews");
      assert.equal(await store.jobs.heartbeat(job!.id, "w1", t0 + 20, LEASE), true);
      // w1 dies: after its lease, w3 takes the job over and w1 can no longer finish it
      const taken = await store.jobs.claimNext("w3", t0 + 20 + LEASE + 1, LEASE, ANY);
      assert.equal(taken?.id, job!.id);
      assert.equal(taken?.attempts, 2);
      assert.equal(await store.jobs.finish(job!.id, "w1", t0 + LEASE * 2, { state: "done" }), false);
      assert.equal(await store.jobs.finish(job!.id, "w3", t0 + LEASE * 2, { state: "done" }), true);
      await drain(t0 + LEASE * 3);
    });

    test("a retry waits for its time; done and failed jobs are never claimed", async () => {
      const t0 = 2_000_000;
      await enqueue(t0);
      const job = (await store.jobs.claimNext("w", t0, LEASE, ANY))!;
      await store.jobs.finish(job.id, "w", t0, { state: "queued", retryAt: t0 + 5000, error: "network" });
      assert.equal(await store.jobs.claimNext("w", t0 + 4999, LEASE, ANY), undefined);
      const again = (await store.jobs.claimNext("w", t0 + 5000, LEASE, ANY))!;
      assert.equal(again.id, job.id);
      assert.equal(again.lastError, "network");
      await store.jobs.finish(again.id, "w", t0 + 5000, { state: "failed", error: "corrupt" });
      assert.equal(await store.jobs.claimNext("w", t0 + 10 * LEASE, LEASE, ANY), undefined);
    });

    test("many concurrent claimers never take the same job twice", async () => {
      const t0 = 3_000_000;
      for (let i = 0; i < 12; i++) await enqueue(t0 + i);
      const claims = await Promise.all(Array.from({ length: 30 }, (_, i) => store.jobs.claimNext(`w${i}`, t0 + 100, LEASE, ANY)));
      const ids = claims.filter((c) => c !== undefined).map((c) => c!.id);
      assert.equal(ids.length, 12);
      assert.equal(new Set(ids).size, 12);
      await drain(t0 + LEASE * 3);
    });

    test("a row of a kind no handler knows is never claimed, queued or with its lease run out", async () => {
      const t0 = 4_000_000;
      const row = (state: string, leaseUntil: number | null) => ({
        kind: "webhook-delivery" as unknown as JobKind, documentId: "nobody", accountId, state, attempts: 0, runAt: t0,
        leaseUntil, leaseOwner: leaseUntil === null ? null : "dead", lastError: "", createdAt: t0, updatedAt: t0,
      });
      await dbOf(store).insertInto("jobs").values([row("queued", null), row("running", t0 + 1)]).execute();
      assert.equal(await store.jobs.claimNext("w", t0 + LEASE, LEASE, ANY), undefined);
      const known = await enqueue(t0 + 5);
      assert.equal((await store.jobs.claimNext("w", t0 + LEASE, LEASE, ANY))?.documentId, known, "a known kind behind it is claimed");
      assert.equal(await store.jobs.claimNext("w", t0 + LEASE, LEASE, ANY), undefined);
      assert.equal(await store.jobs.claimNext("w", t0 + LEASE, LEASE, { ...ANY, kinds: [] }), undefined);
      const strangers = await dbOf(store).selectFrom("jobs").select(["state", "attempts"]).where("documentId", "=", "nobody").orderBy("id").execute();
      assert.deepEqual(strangers, [{ state: "queued", attempts: 0 }, { state: "running", attempts: 0 }]);
      await dbOf(store).deleteFrom("jobs").where("documentId", "=", "nobody").execute();
      await drain(t0 + LEASE * 3);
    });

    test("an account with nothing running goes before another account's older queue", async () => {
      const t0 = 5_000_000;
      const other = (await seedAccount(store, "other", "o".repeat(32), "s".repeat(32), 1));
      const busy: string[] = [];
      for (let i = 0; i < 5; i++) busy.push(await enqueue(t0 + i));
      const first = (await store.jobs.claimNext("w", t0 + 100, LEASE, ANY))!;
      assert.equal(first.documentId, busy[0]);
      assert.equal(first.accountId, accountId, "the job carries its account");
      const late = await enqueue(t0 + 50, other);
      assert.equal((await store.jobs.claimNext("w", t0 + 100, LEASE, ANY))?.documentId, late, "the idle account's newer job first");
      assert.equal((await store.jobs.claimNext("w", t0 + 100, LEASE, ANY))?.documentId, busy[1], "then back to the oldest");
      await drain(t0 + LEASE * 3);
    });

    test("a skipped account gets nothing, neither queued jobs nor expired leases; the others still get theirs", async () => {
      const t0 = 6_000_000;
      const other = (await seedAccount(store, "third", "t".repeat(32), "s".repeat(32), 1));
      for (let i = 0; i < 3; i++) await enqueue(t0 + i);
      const otherDoc = await enqueue(t0 + 20, other);
      const skipBusy: ClaimRules = { ...ANY, skipAccounts: [accountId] };
      const otherJob = (await store.jobs.claimNext("w", t0 + 100, LEASE, skipBusy))!;
      assert.equal(otherJob.documentId, otherDoc);
      assert.equal(await store.jobs.claimNext("w", t0 + 100, LEASE, skipBusy), undefined);
      await store.jobs.finish(otherJob.id, "w", t0 + 100, { state: "done" });
      const held = (await store.jobs.claimNext("dead", t0 + 100, LEASE, ANY))!;
      assert.equal(held.accountId, accountId);
      // its worker dies: the expired lease is not taken for a skipped account either
      assert.equal(await store.jobs.claimNext("w", t0 + 200 + LEASE, LEASE, skipBusy), undefined);
      const taken = (await store.jobs.claimNext("w", t0 + 200 + LEASE, LEASE, ANY))!;
      assert.equal(taken.id, held.id);
      assert.equal(taken.attempts, 2);
      await drain(t0 + LEASE * 3);
    });

    test("a job waiting for disk space gives its attempt back, and its document is overdue only after the disk wait (issue 23 item 0d)", async () => {
      const t0 = 50_000_000;
      const hour = 3_600_000;
      await drain(t0);
      const waiting = await enqueue(t0);
      const plain = await enqueue(t0 + 1);
      const job = (await store.jobs.claimNext("w", t0 + 10, LEASE, ANY))!;
      assert.equal(job.documentId, waiting);
      assert.equal(job.attempts, 1);
      await store.jobs.finish(job.id, "w", t0 + 20, { state: "queued", retryAt: t0 + 30, error: `${DISK_WAIT_MARK}the disk is full`, uncounted: true });
      const [queued] = await store.jobs.getForDocument(waiting);
      assert.equal(queued?.attempts, 0, "the wait used up no attempt");
      assert.equal(queued?.state, "queued");
      // Both in P for 2 hours, past a 1 hour processing bound; the waiting one has 6 hours more.
      const patience = (now: number) => ({ mark: DISK_WAIT_MARK, cutoff: now - hour - 6 * hour });
      const soon = await store.jobs.findOverdue(t0 + 2 * hour - hour, 500, patience(t0 + 2 * hour));
      assert.ok(soon.includes(plain));
      assert.ok(!soon.includes(waiting), "a document waiting for disk space is not overdue yet");
      const late = await store.jobs.findOverdue(t0 + 8 * hour - hour, 500, patience(t0 + 8 * hour));
      assert.ok(late.includes(waiting), "past the disk wait it is");
      await drain(t0 + 8 * hour);
    });
  });
}
