import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { createRateLimiter } from "../../src/api/rate-limit.ts";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { QuireClient } from "../../src/client/quire-client.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { call, type Caller, callerOf, getNormal, multipart, type Params, rawHttp, type RawResponse, sign } from "../helpers/api-client.ts";
import { assertError, type Format, okRsp, readAnswer } from "../helpers/api-answers.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** Error 012 (decisions §2 step 3, §9): a leaky bucket per API key. */

describe("the leaky bucket", () => {
  test("a burst, then the sustained rate; refused requests pour nothing", () => {
    let now = 1_000_000;
    const rl = createRateLimiter({ burst: 3, perSecond: 2, clock: () => now });
    assert.deepEqual([rl.allow("k"), rl.allow("k"), rl.allow("k"), rl.allow("k")], [true, true, true, false]);
    assert.equal(rl.allow("other"), true, "each key has its own bucket");
    now += 499;
    assert.equal(rl.allow("k"), false, "not yet one unit drained");
    now += 1;
    assert.equal(rl.allow("k"), true, "half a second drains one request at 2/s");
    assert.equal(rl.allow("k"), false);
    for (let i = 0; i < 100; i++) rl.allow("k"); // refused, and pouring nothing
    now += 1500;
    assert.deepEqual([rl.allow("k"), rl.allow("k"), rl.allow("k"), rl.allow("k")], [true, true, true, false]);
  });

  test("idle buckets are dropped, so memory stays bounded", () => {
    let now = 0;
    const rl = createRateLimiter({ burst: 10, perSecond: 1, clock: () => now, sweepEveryMs: 1000 });
    for (let i = 0; i < 1000; i++) rl.allow(`key${i}`);
    assert.equal(rl.size(), 1000);
    now += 500;
    rl.allow("fresh");
    assert.equal(rl.size(), 1001, "the rest are still draining");
    now += 1000;
    rl.allow("fresh");
    assert.equal(rl.size(), 1, "only the key still holding requests remains");
  });

  test("perSecond 0 turns the limit off", () => {
    const rl = createRateLimiter({ burst: 1, perSecond: 0 });
    for (let i = 0; i < 1000; i++) assert.equal(rl.allow("k"), true);
    assert.equal(rl.size(), 0);
  });

  test("configuration: defaults far above a normal client; bad values refused", () => {
    const config = loadConfig({ QUIRE_DATA_DIR: "/tmp/quire-x" });
    assert.equal(config.rateBurst, 300);
    assert.equal(config.ratePerSecond, 50);
    const set = loadConfig({ QUIRE_DATA_DIR: "/tmp/quire-x", QUIRE_RATE_BURST: "20", QUIRE_RATE_PER_SECOND: "0.5" });
    assert.deepEqual([set.rateBurst, set.ratePerSecond], [20, 0.5]);
    assert.equal(loadConfig({ QUIRE_DATA_DIR: "/tmp/quire-x", QUIRE_RATE_PER_SECOND: "0" }).ratePerSecond, 0);
    for (const [name, value] of [["QUIRE_RATE_BURST", "0"], ["QUIRE_RATE_BURST", "1.5"], ["QUIRE_RATE_PER_SECOND", "-1"], ["QUIRE_RATE_PER_SECOND", "fast"], ["QUIRE_RATE_PER_SECOND", "1e3"]]) {
      assert.throws(() => loadConfig({ QUIRE_DATA_DIR: "/tmp/quire-x", [name!]: value! }), ConfigError, `${name}=${value}`);
    }
  });
});

describe("a server with QUIRE_RATE_BURST=3, QUIRE_RATE_PER_SECOND=2", () => {
  let server: TestServer;
  let c: Caller;
  let other: Caller;
  before(async () => {
    server = await startTestServer({ QUIRE_RATE_BURST: "3", QUIRE_RATE_PER_SECOND: "2" });
    c = callerOf(server);
    const o = await createAccount(server.services.store, "other");
    other = { server, apiKey: o.apiKey, apiSecret: o.apiSecret };
  });
  after(() => server.close());

  const list = (who: Caller, format: Format = "json") => call(who, "document_embeds.list", {}, format);
  const isThrottled = (body: string) => body.includes('"code":"012"');

  /** Requests until one is refused with 012: the bucket is then full for the next half second. */
  async function exhaust(who: Caller): Promise<void> {
    for (let i = 0; i < 20; i++) if (isThrottled((await list(who)).body)) return;
    assert.fail("never throttled");
  }

  test("the burst is served, then 012 in both formats, with the exact message and no field", async () => {
    await sleep(2000); // a full bucket's worth of drain, whatever ran before
    for (let i = 0; i < 3; i++) okRsp(await list(c), "json");
    assertError(await list(c, "xml"), "xml", "012");
    await exhaust(c);
    assertError(await list(c, "json"), "json", "012");
  });

  /** A request with the key and a zero signature: what someone who knows only the key can send. */
  const forged = (who: Caller, format: Format = "json") =>
    getNormal(who, { action: "svc.document_embeds.list", apiKey: who.apiKey, format, signature: "0".repeat(32) });

  /** Forged requests until one is refused with 012: the key's bucket of unsigned requests is then full. */
  async function exhaustUnsigned(who: Caller): Promise<void> {
    for (let i = 0; i < 20; i++) if (isThrottled((await forged(who)).body)) return;
    assert.fail("forged requests never throttled");
  }

  /**
   * `send` is answered 012 once `drain` has emptied the bucket: the limit is checked before what
   * `send` gets wrong. A unit comes back every 500 ms here, so on a loaded machine one can refill
   * between the two, and `send` then meets the later check; that shows nothing either way, so the
   * bucket is drained again and `send` repeated. A limit checked after the later check never
   * answers 012, whatever the attempts.
   */
  async function throttledBefore(drain: (who: Caller) => Promise<void>, send: () => Promise<RawResponse>, format: Format): Promise<void> {
    let answer: RawResponse | undefined;
    // In the answer's own format: isThrottled reads JSON only.
    for (let i = 0; i < 5 && !(answer && readAnswer(answer, format).error?.code === "012"); i++) {
      await drain(c);
      answer = await send();
    }
    assertError(answer!, format, "012");
  }

  test("012 comes after 009/010 and before the signature, action and parameter checks", async () => {
    await exhaust(c);
    // an unknown key is 010 however hard it floods, and a missing one 009
    const unknown = "z".repeat(32);
    for (let i = 0; i < 10; i++) assertError(await getNormal(c, { action: "svc.document_embeds.list", apiKey: unknown, format: "json", signature: "x" }), "json", "010");
    assertError(await getNormal(c, { action: "svc.document_embeds.list", format: "json", signature: "x" }), "json", "009");
    // requests not correctly signed pour into a bucket of their own (decisions §2 step 3)
    const badSignature: Params = { ...sign({ action: "svc.document_embeds.list", apiKey: c.apiKey, format: "json" }, c.apiSecret), signature: "0".repeat(32) };
    await throttledBefore(exhaustUnsigned, () => getNormal(c, badSignature), "json");
    await throttledBefore(exhaustUnsigned, () => getNormal(c, { action: "svc.document_embeds.list", apiKey: c.apiKey, format: "xml" }), "xml");
    // correctly signed ones into the key's own
    await throttledBefore(exhaust, () => call(c, "no.such_action", {}, "json"), "json");
    await throttledBefore(exhaust, () => call(c, "document_embed.add", {}, "json"), "json");
    // the upload endpoint counts too
    const { body, contentType } = multipart(sign({ action: "svc.document.upload", apiKey: c.apiKey, format: "json" }, c.apiSecret));
    await throttledBefore(exhaust, () => rawHttp(server.url, {
      method: "POST",
      path: "/upload/1_0",
      headers: [["Content-Type", contentType], ["Content-Length", String(Buffer.byteLength(body))]],
      body,
    }), "json");
  });

  test("a flood of wrongly signed requests with a victim's key never throttles the victim's signed calls", async () => {
    await sleep(2000); // both buckets drained, whatever ran before
    let floodThrottled = 0;
    let floodRefusedAs011 = 0;
    for (let round = 0; round < 8; round++) {
      // someone who knows only the key: 20 forged requests per signed call of the owner
      const flood = await Promise.all(Array.from({ length: 20 }, () => forged(c)));
      for (const res of flood) {
        if (isThrottled(res.body)) floodThrottled++;
        else {
          assertError(res, "json", "011");
          floodRefusedAs011++;
        }
      }
      okRsp(await list(c), "json");
      // the owner's calls at its own pace stay within its own bucket (3 at once, 2/s)
      await sleep(600);
    }
    assert.ok(floodThrottled > 0, "the flood itself is throttled once over its own bucket");
    assert.ok(floodRefusedAs011 >= 3, "the flood's first requests are answered at step 5, 011");
  });

  test("another key is not affected", async () => {
    await exhaust(c);
    for (let i = 0; i < 3; i++) okRsp(await list(other), "json");
    assertError(await list(c), "json", "012");
  });

  test("a throttled key is served again after waiting", async () => {
    await exhaust(c);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await list(c);
      if (!isThrottled(res.body)) {
        okRsp(res, "json");
        break;
      }
      assert.ok(Date.now() < deadline, "served again within 10 s");
      await sleep(50);
    }
  });
});

describe("QUIRE_RATE_PER_SECOND=0", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ QUIRE_RATE_BURST: "1", QUIRE_RATE_PER_SECOND: "0" });
  });
  after(() => server.close());

  test("never throttles", async () => {
    const c = callerOf(server);
    for (let i = 0; i < 20; i++) okRsp(await call(c, "document_embeds.list", {}), "json");
  });
});

describe("an upload counts once against the limit", () => {
  let server: TestServer;
  before(async () => {
    // A rate so slow that nothing drains during the test: only the burst counts.
    server = await startTestServer({ QUIRE_RATE_BURST: "2", QUIRE_RATE_PER_SECOND: "0.001" });
  });
  after(() => server.close());

  test("checked before its file and at its end, it still takes one unit of the burst", async () => {
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    const uploaded = await client.upload(`${FIXTURES}pdf-quartz-firefox-1page.pdf`);
    assert.equal(uploaded.rsp.stat, "ok");
    const second = await client.call("document.url_upload", { slurpUrl: "https://example.com/a.pdf" });
    assert.equal(second.rsp.stat, "ok", "the second unit of the burst is still there");
    const third = await client.call("document.url_upload", { slurpUrl: "https://example.com/b.pdf" });
    assert.equal(third.rsp._content?.error?.code, "012");
  });
});
