import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { accountIdOf, seedDoc } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * decisions §12 without QUIRE_FETCH_ALLOW_PRIVATE: a receiver whose name resolves to this machine
 * is refused at every delivery (after DNS resolution), and a delivery that never succeeds is
 * marked failed once its retry window ends (3 s here, 24 h by default), after which the
 * document's next delivery has its turn.
 */

interface DeliveryRow {
  event: string;
  status: string;
  attempts: number;
  lastError: string;
}

describe("webhook receivers on private addresses, and the end of retries", { timeout: 90_000 }, () => {
  let server: TestServer;
  let worker: TestWorker;
  let receiver: Receiver;
  let client: QuireClient;

  before(async () => {
    server = await startTestServer({ QUIRE_WEBHOOK_RETRY_SCHEDULE: "150ms", QUIRE_WEBHOOK_RETRY_FOR: "3s", QUIRE_RATE_PER_SECOND: "0" });
    // As `quire worker` runs by default: private addresses refused (the test workers allow them unless told).
    worker = await startTestWorker(server, { startOffice: false, allowPrivate: false });
    receiver = await startReceiver();
    client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
  });
  after(async () => {
    await worker?.stop();
    await receiver?.close();
    await server?.close();
  });

  const history = async (documentId: string): Promise<DeliveryRow[]> =>
    ((unwrap(await client.call("webhook.deliveries", { documentId })).result as { _content: Array<{ delivery: DeliveryRow }> })._content).map((c) => c.delivery);

  test("a name resolving to loopback is accepted when set, refused at delivery, and failed for good after the window", async () => {
    // A literal loopback address is refused when set; a name is only resolved when delivering.
    const literal = await client.call("webhook.set", { url: receiver.url });
    assert.equal(literal.rsp.stat, "fail");
    await client.ok("webhook.set", { url: `http://localhost:${receiver.port}/hook` });

    const owner = { accountId: await accountIdOf(server, server.account.apiKey), username: "tester" };
    const doc = await seedDoc(server, owner, { state: "P" });
    assert.ok(await server.services.store.documents.markActive(doc.documentId, { pageCount: 1, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, Date.now()));
    await client.ok("document.delete", { names: doc.documentId });

    let rows: DeliveryRow[];
    for (let i = 0; ; i++) {
      rows = await history(doc.documentId);
      if (rows.length === 2 && rows.every((r) => r.status === "failed")) break;
      assert.ok(i < 1200, `both deliveries end failed: ${JSON.stringify(rows)}`);
      await sleep(50);
    }
    const [deleted, active] = rows as [DeliveryRow, DeliveryRow];
    assert.equal(active.event, "document.active");
    assert.ok(active.attempts >= 1);
    assert.match(active.lastError, /not allowed/);
    assert.equal(deleted.event, "document.deleted");
    assert.ok(deleted.attempts >= 1, "the next delivery had its turn once the first failed for good");
    assert.equal(receiver.received.length, 0, "nothing ever reached the receiver");
    // The job ends right after its last attempt is recorded.
    for (let i = 0; ; i++) {
      const waiting = await dbOf(server.services.store).selectFrom("jobs").select("state").where("kind", "=", "webhook-delivery").where("state", "in", ["queued", "running"]).execute();
      if (waiting.length === 0) break;
      assert.ok(i < 400, "no delivery job left waiting");
      await sleep(50);
    }
  });
});
