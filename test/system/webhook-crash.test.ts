import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { accountIdOf, seedDoc } from "../helpers/api-seed.ts";
import { exited } from "../helpers/server-process.ts";
import { startPdfWorker } from "../helpers/pdf-worker.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { signatureValid, startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * decisions §12, at least once: a worker killed (SIGKILL) while its delivery is on the wire loses
 * nothing. The delivery stays pending; after the attempt's lease (the post's 8 s timeout and a
 * margin) another worker posts it again, with the same Quire-Delivery id, and the document's next
 * delivery follows only after it is acknowledged.
 */

const startWorkerChild = (server: TestServer) =>
  // The held first post must outlast a loaded machine's look at it (one query, then the kill: the
  // kill, not a timeout, ends it), and the second post waits this long plus a margin after it.
  startPdfWorker(server, { QUIRE_FETCH_ALLOW_PRIVATE: "1", QUIRE_WEBHOOK_TIMEOUT_SECONDS: "8", QUIRE_WEBHOOK_RETRY_SCHEDULE: "100ms" });

describe("SIGKILL of a worker in the middle of a webhook delivery", { timeout: 120_000 }, () => {
  let server: TestServer;
  let receiver: Receiver;
  const children: Array<ReturnType<typeof startWorkerChild>> = [];

  before(async () => {
    server = await startTestServer({ QUIRE_FETCH_ALLOW_PRIVATE: "1", QUIRE_RATE_PER_SECOND: "0" });
    // The first request is held open until the worker that sent it dies; every later one is acknowledged.
    receiver = await startReceiver((r) => (r.index === 0 ? "hold" : 200));
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGKILL");
    await receiver?.close();
    await server?.close();
  });

  test("the delivery is posted again after the lease expires, and the next one follows it", async () => {
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const { secret } = unwrap(await client.call("webhook.set", { url: receiver.url })).webhook as { secret: string };
    const owner = { accountId: await accountIdOf(server, server.account.apiKey), username: "tester" };
    const doc = await seedDoc(server, owner, { state: "P" });
    const { store } = server.services;

    // Both deliveries exist before any worker runs: the delete, which ends the document's jobs,
    // cannot race the post. One worker posts the first and is killed holding it; another takes over.
    assert.ok(await store.documents.markActive(doc.documentId, { pageCount: 1, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, Date.now()));
    await client.ok("document.delete", { names: doc.documentId });
    const first = startWorkerChild(server);
    children.push(first);
    await first.ready;
    for (let i = 0; receiver.received.length === 0; i++) {
      assert.ok(i < 1200, "a worker posts the delivery");
      await sleep(25);
    }
    first.child.kill("SIGKILL");
    await exited(first.child);

    const pending = await dbOf(store).selectFrom("webhookDeliveries").select(["event", "status"]).where("documentId", "=", doc.documentId).orderBy("id").execute();
    assert.deepEqual(pending, [{ event: "document.active", status: "pending" }, { event: "document.deleted", status: "pending" }], "nothing recorded, nothing lost");

    const second = startWorkerChild(server);
    children.push(second);
    for (let i = 0; ; i++) {
      const rows = await dbOf(store).selectFrom("webhookDeliveries").select("status").where("documentId", "=", doc.documentId).execute();
      if (rows.every((r) => r.status === "delivered")) break;
      assert.ok(i < 1200, `both deliveries acknowledged: ${JSON.stringify(rows)}`);
      await sleep(50);
    }
    second.child.kill("SIGTERM");
    await exited(second.child);

    const events = receiver.received.map((r) => JSON.parse(r.body) as { event: string });
    assert.deepEqual(events.map((e) => e.event), ["document.active", "document.active", "document.deleted"], "posted again, then the next one");
    const [held, again] = receiver.received;
    assert.equal(again!.headers["quire-delivery"], held!.headers["quire-delivery"], "the same delivery, not a new one");
    for (const r of receiver.received) assert.ok(signatureValid(r.headers["quire-signature"], r.body, secret));
  });
});
