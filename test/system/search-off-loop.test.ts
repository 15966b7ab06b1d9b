import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { accountIdOf } from "../helpers/api-seed.ts";
import { callerOf } from "../helpers/api-client.ts";
import { until } from "../helpers/poll.ts";
import { newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * Issue 23 item 1: a search runs in a thread of its own (SQLite), so the server answers other
 * requests while it runs. Told by order, not by time: /healthz is asked only once the search is
 * under way in the thread, and answered while it still is.
 */

/** 64 distinct words on every page of every document: searching for all of them is the costliest search. */
const WORDS = Array.from({ length: 64 }, (_, i) => `w${(i * 7919 + 1000).toString(36)}q`);

let server: TestServer;

before(async () => {
  // No anonymous budget: this test is about the event loop, not the share of one address.
  // One search at a time and none waiting: a second search while one runs is refused.
  server = await startTestServer({ QUIRE_ANONYMOUS_PER_SECOND: "0", QUIRE_SEARCH_CONCURRENCY: "1", QUIRE_SEARCH_QUEUE: "0" });
  const store = server.services.store;
  const me = await accountIdOf(server, callerOf(server));
  const page = Array.from({ length: 40 }, () => WORDS.join(" ")).join(" ");
  for (let d = 0; d < 100; d++) await publishWithText(store, newStoreDoc(me, "tester", { title: `Corpus ${d}` }), Array.from({ length: 10 }, () => page));
});
after(() => server.close());

test("/healthz is answered while a costly search runs in its thread; the search then answers in full", async () => {
  const store = server.services.store;
  const heavy = `${server.url}/search?q=${encodeURIComponent(WORDS.join(" "))}`;
  // The thread started and its connection open, so what follows is a search under way, not a thread starting.
  assert.equal((await fetch(`${server.url}/search?q=${WORDS[0]}`)).status, 200);

  let searchAnswered = false;
  const search = fetch(heavy).then(async (res) => {
    searchAnswered = true;
    return { status: res.status, body: await res.text() };
  });
  await until(() => store.search.load().active === 1, 30_000, "the search to reach its thread");
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(searchAnswered, false, "/healthz was answered before the search");
  assert.equal(store.search.load().active, 1, "while the search was still running in its thread");

  const answered = await search;
  assert.equal(answered.status, 200);
  assert.match(answered.body, /100 documents match/);
  assert.deepEqual(store.search.load(), { active: 0, waiting: 0 });
});

test("a search while every place is taken and no queue is left gets a 503 page with Retry-After, at once", async () => {
  const store = server.services.store;
  const heavy = `${server.url}/search?q=${encodeURIComponent(WORDS.join(" "))}`;
  let attempts = 0;
  for (;;) {
    attempts++;
    let heavyAnswered = false;
    const first = fetch(heavy).then(async (res) => {
      heavyAnswered = true;
      return res.status;
    });
    await until(() => store.search.load().active === 1, 30_000, "the first search to take the place");
    const second = await fetch(`${server.url}/search?q=${WORDS[1]}`);
    const body = await second.text();
    const firstStillRunning = !heavyAnswered;
    assert.equal(await first, 200, "the first search answers in full");
    // Told by order: only when the first search still held the place is the second's refusal the point.
    if (!firstStillRunning && attempts < 5) continue;
    assert.ok(firstStillRunning, "the first search held its place while the second was asked");
    assert.equal(second.status, 503);
    assert.equal(second.headers.get("retry-after"), "2");
    assert.match(body, /<h1>Search is busy<\/h1>/);
    break;
  }
  assert.equal((await fetch(`${server.url}/search?q=${WORDS[1]}`)).status, 200, "with the place free, a search is served");
});
