import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { addKey } from "../../src/accounts/account-admin.ts";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { call, type Caller, callerOf, list } from "../helpers/api-client.ts";
import { accountIdOf, otherCaller, seedDoc } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * `svc.documents.list` answers are cached under the account's documents version
 * (src/api/answer-cache.ts). Whatever changes the documents, and whoever changes them, the next
 * answer is the fresh one; answers never cross accounts; a revoked key is refused at once.
 */

let server: TestServer;
let c: Caller;
/** A second connection to the same database file: what a worker process or the CLI would hold. */
let elsewhere: Store;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  elsewhere = await openStore(server.config.databaseUrl);
  const owner = { accountId: await accountIdOf(server, c), username: "tester" };
  for (let i = 0; i < 3; i++) await seedDoc(server, owner, { name: `doc-${i}`, nameGiven: true, title: `Title ${i}`, state: "P" });
});

after(async () => {
  await elsewhere?.close();
  await server?.close();
});

const titles = async (caller: Caller, format: "xml" | "json" = "json") =>
  (await list(caller, { documentSortBy: "title" }, format)).docs.map((d) => `${String(d.title)}/${String(d.state)}`);

test("the same question twice gives the same bytes", async () => {
  const first = await call(c, "documents.list", { documentSortBy: "title" });
  const second = await call(c, "documents.list", { documentSortBy: "title" });
  assert.equal(second.body, first.body);
});

test("an update through the API shows in the next answer, in both formats", async () => {
  for (const format of ["json", "xml"] as const) await titles(c, format); // cached now
  const res = await call(c, "document.update", { name: "doc-1", title: "Renamed" });
  assert.match(res.body, /"stat":"ok"/);
  for (const format of ["json", "xml"] as const) {
    assert.deepEqual(await titles(c, format), ["Renamed/P", "Title 0/P", "Title 2/P"]);
  }
});

test("a change made by another process (a worker publishing a document) shows in the next answer", async () => {
  await titles(c);
  const doc = (await list(c, { documentSortBy: "title" })).docs.find((d) => d.title === "Title 0");
  assert.ok(doc);
  const activated = await elsewhere.documents.markActive(
    String(doc.documentId),
    { pageCount: 4, coverWidth: 10, coverHeight: 10, description: "from the worker", name: undefined },
    Date.now(),
  );
  assert.equal(activated, true);
  assert.deepEqual(await titles(c), ["Renamed/P", "Title 0/A", "Title 2/P"]);
});

test("a delete shows in the next answer", async () => {
  await titles(c);
  await call(c, "document.delete", { names: "doc-2" });
  assert.deepEqual(await titles(c), ["Renamed/P", "Title 0/A"]);
});

test("the same parameters from another account get that account's own answer", async () => {
  const other = await otherCaller(server, "other");
  await seedDoc(server, { accountId: other.accountId, username: "other" }, { name: "theirs", nameGiven: true, title: "Theirs", state: "A" });
  await titles(c);
  assert.deepEqual(await titles(other), ["Theirs/A"]);
  assert.deepEqual(await titles(c), ["Renamed/P", "Title 0/A"]);
});

test("a second key of the same account gets the same answer; a key revoked elsewhere is refused at once", async () => {
  const second = await addKey(server.services.store, "tester");
  const c2: Caller = { server, apiKey: second.apiKey, apiSecret: second.apiSecret };
  assert.deepEqual(await titles(c2), await titles(c));
  assert.equal(await elsewhere.accounts.revokeKey(second.apiKey, Date.now()), true);
  const res = await call(c2, "documents.list", { documentSortBy: "title" });
  assert.match(res.body, /"code":"010"/);
});

test("a bad signature is refused even for a question whose answer is cached", async () => {
  await titles(c);
  const res = await call({ ...c, apiSecret: "x".repeat(32) }, "documents.list", { documentSortBy: "title" });
  assert.match(res.body, /"code":"011"/);
});
