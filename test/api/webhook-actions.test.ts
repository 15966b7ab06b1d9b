import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { parseSecretKeys } from "../../src/domain/secret-box.ts";
import { openStore } from "../../src/store/open-store.ts";
import { parseWebhookEvents, parseWebhookUrl } from "../../src/domain/webhooks.ts";
import { assertError, parseXml } from "../helpers/api-answers.ts";
import { call, callerOf, type Caller } from "../helpers/api-client.ts";
import { accountIdOf, otherCaller, seedDoc } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * decisions §12, the API: svc.webhook.set / get / delete / rotate_secret / deliveries in the
 * envelope of every operation (XML, JSON, JSONP), their hostile inputs (each a 201 or 200 naming
 * the parameter, nothing stored), the address rule at set time, the secret sealed at rest, and
 * one account never seeing another's webhook or deliveries.
 */

type Json = { rsp: { stat: string; _content?: Record<string, unknown> } };
const json = async (c: Caller, action: string, params: Record<string, string> = {}) =>
  JSON.parse((await call(c, action, params)).body) as Json;
const hookOf = (a: Json) => a.rsp._content?.webhook as { url: string; events: string[]; secret?: string } | undefined;

describe("webhook operations", () => {
  let server: TestServer;
  let me: Caller;
  const KEY = randomBytes(32).toString("hex");

  before(async () => {
    server = await startTestServer({ QUIRE_SECRET_KEY: KEY, QUIRE_RATE_PER_SECOND: "0" });
    me = callerOf(server);
  });
  after(async () => server?.close());

  test("set answers url, events and a secret; get never answers the secret; set again keeps it; rotate changes it", async () => {
    assert.equal((await json(me, "webhook.get")).rsp._content, undefined, "no webhook yet: an empty ok");
    const set = hookOf(await json(me, "webhook.set", { url: "https://hooks.example.com/quire?x=1", events: "document.deleted, document.active,document.active" }));
    assert.deepEqual(set?.events, ["document.deleted", "document.active"]);
    assert.match(set?.secret ?? "", /^[a-z0-9]{32}$/);
    assert.deepEqual(hookOf(await json(me, "webhook.get")), { url: "https://hooks.example.com/quire?x=1", events: ["document.deleted", "document.active"] });

    const again = hookOf(await json(me, "webhook.set", { url: "https://other.example.org/h" }));
    assert.equal(again?.secret, set?.secret, "changing the address keeps the secret");
    assert.deepEqual(again?.events, ["document.active", "document.failed", "document.deleted", "comment.created"], "events default to all");

    const rotated = hookOf(await json(me, "webhook.rotate_secret"));
    assert.match(rotated?.secret ?? "", /^[a-z0-9]{32}$/);
    assert.notEqual(rotated?.secret, set?.secret);

    // At rest: sealed with QUIRE_SECRET_KEY, the secret itself nowhere in the row.
    const row = await dbOf(server.services.store).selectFrom("webhooks").select("secret").executeTakeFirstOrThrow();
    assert.match(row.secret, /^qsb1:[0-9a-f]{8}:/);
    assert.ok(!row.secret.includes(rotated!.secret!));
    const forDelivery = await server.services.store.webhooks.getForDelivery(await accountIdOf(server, me));
    assert.equal(forDelivery?.secret, rotated?.secret, "the delivery job opens it");

    // `quire accounts reseal` moves webhook secrets to the first key too, so the old one can go.
    const NEW_KEY = randomBytes(32).toString("hex");
    const both = await openStore(server.config.databaseUrl, { secretKeys: parseSecretKeys(`${NEW_KEY},${KEY}`) });
    assert.deepEqual(await both.webhooks.resealSecrets(), { resealed: 1, current: 0, unreadable: 0, changedMeanwhile: 0 });
    await both.close();
    const onlyNew = await openStore(server.config.databaseUrl, { secretKeys: parseSecretKeys(NEW_KEY) });
    assert.equal((await onlyNew.webhooks.getForDelivery(await accountIdOf(server, me)))?.secret, rotated?.secret);
    await onlyNew.close();
    // The server holds only the old key: it could not open this secret any more; start afresh.
    await json(me, "webhook.delete");
  });

  test("XML and JSONP answers", async () => {
    const xml = parseXml((await call(me, "webhook.set", { url: "https://hooks.example.com/x", events: "document.failed" }, "xml")).body) as {
      rsp: { stat: string; webhook: { url: string; secret: string; events: { event: { name: string } } } };
    };
    assert.equal(xml.rsp.stat, "ok");
    assert.equal(xml.rsp.webhook.url, "https://hooks.example.com/x");
    assert.equal(xml.rsp.webhook.events.event.name, "document.failed");
    assert.match(xml.rsp.webhook.secret, /^[a-z0-9]{32}$/);
    const jsonp = await call(me, "webhook.get", { jsonCallback: "app.onHook" });
    assert.match(jsonp.body, /^app\.onHook\(\{"rsp":\{"_content":\{"webhook":\{"url":"https:\/\/hooks\.example\.com\/x","events":\["document\.failed"\]\}\},"stat":"ok"\}\}\)$/);
  });

  test("hostile and malformed values: 200/201 naming the parameter, nothing changed", async () => {
    await json(me, "webhook.set", { url: "https://kept.example.com/" });
    const cases: Array<[Record<string, string>, string, string]> = [
      [{}, "200", "url"],
      [{ url: "" }, "200", "url"],
      [{ url: "ftp://example.com/x" }, "201", "url"],
      [{ url: "javascript:alert(1)" }, "201", "url"],
      [{ url: "/relative/path" }, "201", "url"],
      [{ url: "https://user:pass@example.com/" }, "201", "url"],
      [{ url: `https://example.com/${"a".repeat(2048)}` }, "201", "url"],
      [{ url: "https://example.com/\nx" }, "201", "url"],
      [{ url: "http://127.0.0.1:8080/" }, "201", "url"],
      [{ url: "http://0x7f.1/" }, "201", "url"],
      [{ url: "http://2130706433/" }, "201", "url"],
      [{ url: "http://[::1]/" }, "201", "url"],
      [{ url: "http://[::ffff:10.0.0.1]/" }, "201", "url"],
      [{ url: "http://10.1.2.3/" }, "201", "url"],
      [{ url: "http://192.168.0.1/" }, "201", "url"],
      [{ url: "http://169.254.169.254/latest/meta-data/" }, "201", "url"],
      [{ url: "http://[fd00:ec2::254]/" }, "201", "url"],
      [{ url: "http://0.0.0.0/" }, "201", "url"],
      [{ url: "https://example.com/", events: "document.created" }, "201", "events"],
      [{ url: "https://example.com/", events: "document.active,*" }, "201", "events"],
    ];
    for (const [params, code, field] of cases) {
      assertError(await call(me, "webhook.set", params), "json", code, field);
    }
    // An unknown format is answered in XML (decisions §2).
    assertError(await call(me, "webhook.set", { url: "https://example.com/", format: "yaml" }), "xml", "201", "format");
    assert.equal(hookOf(await json(me, "webhook.get"))?.url, "https://kept.example.com/", "no bad request changed the webhook");
    assertError(await call(me, "webhook.deliveries", { pageSize: "101" }), "json", "201", "pageSize");
    assertError(await call(me, "webhook.deliveries", { startIndex: "-1" }), "json", "201", "startIndex");
    assertError(await call(me, "webhook.deliveries", { responseParams: "event,secret" }), "json", "201", "responseParams");
    assertError(await call(me, "webhook.get", { jsonCallback: "alert(1)" }), "json", "201", "jsonCallback");
  });

  test("QUIRE_FETCH_ALLOW_PRIVATE=1 accepts literal private addresses; events default and list rules", () => {
    assert.equal(parseWebhookUrl("http://127.0.0.1:9/hook", true), "http://127.0.0.1:9/hook");
    assert.throws(() => parseWebhookUrl("http://127.0.0.1:9/hook", false));
    assert.equal(parseWebhookUrl("https://localhost/hook", false), "https://localhost/hook", "a name is resolved at delivery, not here");
    assert.deepEqual(parseWebhookEvents(" , "), ["document.active", "document.failed", "document.deleted", "comment.created"]);
  });

  test("the retry settings: 24 hours by default, schedules in ms/s/m/h, bad values reported", () => {
    const defaults = loadConfig({});
    assert.equal(defaults.webhookRetryWindowMs, 86_400_000);
    assert.deepEqual(defaults.webhookRetryScheduleMs, [10_000, 30_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000]);
    assert.equal(defaults.webhookTimeoutMs, 10_000);
    assert.deepEqual(loadConfig({ QUIRE_WEBHOOK_RETRY_SCHEDULE: "50ms, 2s,1m,1h" }).webhookRetryScheduleMs, [50, 2000, 60_000, 3_600_000]);
    assert.throws(() => loadConfig({ QUIRE_WEBHOOK_RETRY_SCHEDULE: "10s,soon" }), /QUIRE_WEBHOOK_RETRY_SCHEDULE/);
    assert.throws(() => loadConfig({ QUIRE_WEBHOOK_RETRY_FOR: "0s" }), /QUIRE_WEBHOOK_RETRY_FOR/);
    assert.throws(() => loadConfig({ QUIRE_WEBHOOK_TIMEOUT_SECONDS: "0" }), /QUIRE_WEBHOOK_TIMEOUT_SECONDS/);
  });

  test("deliveries: newest first, paged, projected; another account sees none of them, nor the webhook", async () => {
    await json(me, "webhook.set", { url: "https://hooks.example.com/d" });
    const owner = { accountId: await accountIdOf(server, me), username: "tester" };
    const docs = [await seedDoc(server, owner, { state: "A" }), await seedDoc(server, owner, { state: "F" })];
    for (const d of docs) await json(me, "document.delete", { names: d.documentId });

    const page = (await json(me, "webhook.deliveries", { pageSize: "1" })).rsp._content?.result as {
      totalCount: number; more: boolean; _content: Array<{ delivery: Record<string, unknown> }>;
    };
    assert.equal(page.totalCount, 2);
    assert.equal(page.more, true);
    const newest = page._content[0]!.delivery;
    assert.equal(newest.documentId, docs[1]!.documentId);
    assert.deepEqual(Object.keys(newest), ["deliveryId", "event", "documentId", "status", "attempts", "created", "delivered", "lastError"]);
    assert.equal(newest.event, "document.deleted");
    assert.equal(newest.status, "pending");
    assert.equal(newest.attempts, 0);
    assert.equal(newest.delivered, "");
    const projected = (await json(me, "webhook.deliveries", { responseParams: "event,status", documentId: docs[0]!.documentId })).rsp._content?.result as {
      _content: Array<{ delivery: Record<string, unknown> }>;
    };
    assert.deepEqual(projected._content, [{ delivery: { event: "document.deleted", status: "pending" } }]);

    const other = await otherCaller(server, "stranger");
    assert.equal((await json(other, "webhook.get")).rsp._content, undefined);
    const theirs = (await json(other, "webhook.deliveries", { documentId: docs[0]!.documentId })).rsp._content?.result as { totalCount: number };
    assert.equal(theirs.totalCount, 0);
    assert.equal((await json(other, "webhook.rotate_secret")).rsp._content, undefined, "no webhook: nothing to rotate");
    await json(other, "webhook.delete");
    assert.ok(hookOf(await json(me, "webhook.get")), "another account's delete leaves mine");

    assert.deepEqual((await json(me, "webhook.delete")).rsp, { stat: "ok" });
    assert.equal((await json(me, "webhook.get")).rsp._content, undefined);
    assert.deepEqual((await json(me, "webhook.delete")).rsp, { stat: "ok" }, "deleting again is harmless");
  });
});
