import assert from "node:assert/strict";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { accountIdOf, seedDoc } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { signatureValid, startReceiver, type Received, type Receiver } from "../helpers/webhook-receiver.ts";

/**
 * decisions §12 with a real worker and a local receiver: deliveries of A, F and delete, signed;
 * a receiver that fails four times gets the delivery on the fifth attempt; a later event of the
 * same document waits until the earlier one is acknowledged. Retries in milliseconds here
 * (QUIRE_WEBHOOK_RETRY_SCHEDULE); the receiver is on 127.0.0.1, so private addresses are allowed.
 */

interface Body {
  event: string;
  created: string;
  document: Record<string, unknown>;
}

const parse = (r: Received): Body => JSON.parse(r.body) as Body;

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe("webhook deliveries", { timeout: 120_000 }, () => {
  let server: TestServer;
  let worker: TestWorker;
  let receiver: Receiver;
  let client: QuireClient;
  let secret: string;
  /** Per document: how many times the receiver refuses its `document.active` delivery before accepting it. */
  const refuseActive = new Map<string, number>();

  before(async () => {
    server = await startTestServer({
      QUIRE_FETCH_ALLOW_PRIVATE: "1",
      QUIRE_WEBHOOK_RETRY_SCHEDULE: "100ms,150ms,200ms",
      QUIRE_WEBHOOK_RETRY_FOR: "120s",
      QUIRE_WEBHOOK_TIMEOUT_SECONDS: "5",
      QUIRE_RATE_PER_SECOND: "0",
    });
    worker = await startTestWorker(server, { startOffice: false });
    receiver = await startReceiver((r) => {
      const body = parse(r);
      const id = String(body.document.documentId);
      const left = refuseActive.get(id) ?? 0;
      if (body.event === "document.active" && left > 0) {
        refuseActive.set(id, left - 1);
        return 500;
      }
      return 200;
    });
    client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const hook = unwrap(await client.call("webhook.set", { url: receiver.url })).webhook as { secret: string; events: string[] };
    assert.deepEqual(hook.events, ["document.active", "document.failed", "document.deleted", "comment.created"], "all events by default");
    secret = hook.secret;
  });
  after(async () => {
    await worker?.stop();
    await receiver?.close();
    await server?.close();
  });

  const receivedFor = (documentId: string) => receiver.received.filter((r) => parse(r).document.documentId === documentId);

  test("A, F and delete: each delivered once, signed, with the record as the API answers it", async () => {
    const good = unwrap(await client.upload(join(FIXTURES, "pdf-quartz-firefox-1page.pdf"))).document as { documentId: string };
    const bad = unwrap(await client.upload(join(FIXTURES, "bad", "pdf-encrypted-user-password.pdf"))).document as { documentId: string };
    const active = await until("the active delivery", () => receivedFor(good.documentId)[0]);
    const failed = await until("the failed delivery", () => receivedFor(bad.documentId)[0]);

    for (const [r, event, state] of [[active, "document.active", "A"], [failed, "document.failed", "F"]] as const) {
      assert.equal(r.headers["quire-event"], event);
      assert.match(String(r.headers["quire-delivery"]), /^[0-9a-f-]{36}$/);
      assert.match(String(r.headers["content-type"]), /^application\/json/);
      assert.ok(signatureValid(r.headers["quire-signature"], r.body, secret), "valid signature");
      assert.ok(!signatureValid(r.headers["quire-signature"], r.body.replace(state, "X"), secret), "a changed body does not verify");
      const body = parse(r);
      assert.equal(body.event, event);
      assert.match(body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(body.document.state, state);
      // The record as svc.document.update/documents.list answer it: same fields, same values.
      const listed = unwrap(await client.call("documents.list", { documentStates: state, pageSize: "100" })).result as { _content: Array<{ document: Record<string, unknown> }> };
      const asListed = listed._content.map((c) => c.document).find((d) => d.documentId === body.document.documentId);
      assert.deepEqual(body.document, asListed);
    }
    assert.equal(parse(failed).document.errorCode, 4);

    await client.ok("document.delete", { names: good.documentId });
    const deleted = await until("the deleted delivery", () => receivedFor(good.documentId).find((r) => parse(r).event === "document.deleted"));
    assert.ok(signatureValid(deleted.headers["quire-signature"], deleted.body, secret));
    assert.equal(parse(deleted).document.state, "A", "the record as it was when deleted");
    assert.notEqual(deleted.headers["quire-delivery"], active.headers["quire-delivery"]);

    await sleep(300); // a repeat, if there were one, would come within the retry schedule
    assert.equal(receivedFor(good.documentId).length, 2, "active and deleted, once each");
    assert.equal(receivedFor(bad.documentId).length, 1);
    const history = unwrap(await client.call("webhook.deliveries", { documentId: good.documentId })).result as { totalCount: number; _content: Array<{ delivery: Record<string, unknown> }> };
    assert.equal(history.totalCount, 2);
    assert.deepEqual(history._content.map((c) => [c.delivery.event, c.delivery.status, c.delivery.attempts]), [
      ["document.deleted", "delivered", 1],
      ["document.active", "delivered", 1],
    ]);
  });

  test("a receiver that fails four times gets it on the fifth attempt; the document's next event waits for it", async () => {
    const owner = { accountId: await accountIdOf(server, server.account.apiKey), username: "tester" };
    const doc = await seedDoc(server, owner, { state: "P" });
    refuseActive.set(doc.documentId, 4);
    // P -> A as the conversion records it, then a delete right away: two deliveries of one document.
    assert.ok(await server.services.store.documents.markActive(doc.documentId, { pageCount: 1, coverWidth: 1, coverHeight: 1, description: undefined, name: undefined }, Date.now()));
    await client.ok("document.delete", { names: doc.documentId });

    const deleted = await until("the deleted delivery", () => receivedFor(doc.documentId).find((r) => parse(r).event === "document.deleted"));
    const all = receivedFor(doc.documentId);
    const actives = all.filter((r) => parse(r).event === "document.active");
    assert.equal(actives.length, 5, "four refused attempts and the acknowledged one");
    assert.equal(new Set(actives.map((r) => r.headers["quire-delivery"])).size, 1, "one delivery id on every attempt");
    for (const r of actives) assert.ok(signatureValid(r.headers["quire-signature"], r.body, secret));
    assert.ok(deleted.index > actives[4]!.index, "the delete is posted only after the activation was acknowledged");

    const history = unwrap(await client.call("webhook.deliveries", { documentId: doc.documentId })).result as { _content: Array<{ delivery: Record<string, unknown> }> };
    const activeRow = history._content.map((c) => c.delivery).find((d) => d.event === "document.active")!;
    assert.equal(activeRow.status, "delivered");
    assert.equal(activeRow.attempts, 5);
    assert.equal(activeRow.lastError, "");
    assert.match(String(activeRow.delivered), /Z$/);
  });

  test("events not asked for are not written", async () => {
    await client.ok("webhook.set", { url: receiver.url, events: "document.failed" });
    const owner = { accountId: await accountIdOf(server, server.account.apiKey), username: "tester" };
    const doc = await seedDoc(server, owner, { state: "A" });
    await client.ok("document.delete", { names: doc.documentId });
    const history = unwrap(await client.call("webhook.deliveries", { documentId: doc.documentId })).result as { totalCount: number };
    assert.equal(history.totalCount, 0);
    const jobs = await server.services.store.jobs.getForDocument(doc.documentId);
    assert.deepEqual(jobs, [], "no delivery job either");
  });
});
