import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import { CONVERT_DOCUMENT, WEBHOOK_DELIVERY } from "../../src/domain/job-kinds.ts";
import { sweepWebhookDeliveries } from "../../src/jobs/webhook-delivery.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * decisions §12 in the store, on both databases: a state change writes its delivery and the
 * delivery's job in its own transaction; a retry is recorded with its job; the head of a
 * document's queue is leased by one attempt at a time; a document whose deliveries lost their job
 * gets one back from the sweeper.
 */

const pgSkip = await postgresUnavailable();
const log = pino({ level: "silent" });

for (const dialect of DIALECTS) {
  describe(`webhook deliveries on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let accountId: number;
    before(async () => {
      ({ store, drop } = await dialect.open());
      accountId = (await seedAccount(store, "hooked", "h".repeat(32), "s".repeat(32), 1));
    });
    after(async () => drop?.());

    async function newDocument(): Promise<string> {
      const now = Date.now();
      const doc = buildNewDocument(
        newDocumentIds(now),
        { accountId, username: "hooked", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
        { name: undefined, title: undefined, tags: ["x"], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [] },
        now,
      );
      await store.documents.insertWithJob(doc, CONVERT_DOCUMENT);
      return doc.documentId;
    }
    const deliveryJobs = (documentId: string) =>
      dbOf(store).selectFrom("jobs").select(["state", "runAt"]).where("kind", "=", WEBHOOK_DELIVERY).where("documentId", "=", documentId).execute();

    test("no webhook: a state change writes nothing more", async () => {
      const id = await newDocument();
      assert.ok(await store.documents.markFailed(id, 3, "corrupt", 10));
      assert.equal((await store.webhookDeliveries.list(accountId, { documentId: id, startIndex: 0, pageSize: 10 })).totalCount, 0);
      assert.deepEqual(await deliveryJobs(id), []);
    });

    test("failed, then deleted: two deliveries in order, one queued job; a retry is recorded with its job", async () => {
      await store.webhooks.set(accountId, { url: "https://hooks.example.com/", events: ["document.failed", "document.deleted"] }, "k".repeat(32), 5);
      const id = await newDocument();
      assert.ok(await store.documents.markFailed(id, 3, "corrupt", 100));
      assert.equal(await store.documents.markFailed(id, 3, "corrupt", 100), false, "a second run changes nothing");
      await store.documents.deleteByNames(accountId, [id], 200);
      const { items } = await store.webhookDeliveries.list(accountId, { documentId: id, startIndex: 0, pageSize: 10 });
      assert.deepEqual(items.map((d) => [d.event, d.status]), [["document.deleted", "pending"], ["document.failed", "pending"]]);
      const failedBody = JSON.parse(items[1]!.body) as { document: { state: string; errorCode: number; tags: string[] } };
      assert.equal(failedBody.document.state, "F");
      assert.equal(failedBody.document.errorCode, 3);
      assert.deepEqual(failedBody.document.tags, ["x"]);
      assert.deepEqual((await deliveryJobs(id)).map((j) => j.state), ["queued"], "the delete kept one delivery job for the document");

      const head = (await store.webhookDeliveries.headOf(id))!;
      assert.equal(head.event, "document.failed", "the oldest first");
      assert.ok(await store.webhookDeliveries.lease(head.id, "a", 1000, 5000));
      assert.equal(await store.webhookDeliveries.lease(head.id, "b", 2000, 5000), false, "one attempt at a time");
      assert.equal(await store.webhookDeliveries.finishAttempt(head, "b", 2000, { status: "delivered" }), false, "only the lease holder records");
      await dbOf(store).deleteFrom("jobs").where("documentId", "=", id).execute();
      assert.ok(await store.webhookDeliveries.finishAttempt(head, "a", 3000, { status: "pending", error: "HTTP 500", nextAttemptAt: 9000 }));
      assert.deepEqual(await deliveryJobs(id), [{ state: "queued", runAt: 9000 }]);
      const again = (await store.webhookDeliveries.headOf(id))!;
      assert.deepEqual([again.id, again.attempts, again.lastError, again.leaseOwner], [head.id, 1, "HTTP 500", null]);
      assert.ok(await store.webhookDeliveries.lease(again.id, "b", 9000, 5000), "free again after the attempt");
      assert.ok(await store.webhookDeliveries.finishAttempt(again, "b", 9100, { status: "delivered" }));
      assert.equal((await store.webhookDeliveries.headOf(id))?.event, "document.deleted");

      // A document whose delivery lost its job gets one back from the sweeper, at the delivery's time.
      await dbOf(store).deleteFrom("jobs").where("documentId", "=", id).execute();
      assert.deepEqual((await store.webhookDeliveries.findStranded(10)).map((s) => s.documentId), [id]);
      await sweepWebhookDeliveries({ store, log, historyMs: 30 * 86_400_000, now: () => 50_000 });
      assert.deepEqual(await deliveryJobs(id), [{ state: "queued", runAt: 50_000 }]);
      assert.deepEqual(await store.webhookDeliveries.findStranded(10), []);
      // Finished deliveries older than the history are forgotten; pending ones never.
      assert.equal(await store.webhookDeliveries.pruneFinished(Date.now()), 1);
      assert.equal((await store.webhookDeliveries.list(accountId, { documentId: id, startIndex: 0, pageSize: 10 })).totalCount, 1);
    });
  });
}
