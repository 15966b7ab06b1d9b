import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { seedDoc } from "../helpers/api-seed.ts";
import { givePassword, signInHttp, TEST_APP_ENV, type AppSession } from "../helpers/app-client.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * The app's moderation page over HTTP (decisions §16): deleting several at once, the
 * publish-at-once setting taking effect on the next comment, and one account never listing,
 * approving or deleting another's comments (the ids are simply passed over).
 */
describe("moderation in the app", () => {
  let server: TestServer;
  let tester: AppSession;
  let other: AppSession;

  const comment = (name: string, text: string) =>
    fetch(`${server.url}/tester/docs/${name}/comments`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ author: "Reader", text }).toString(),
    });
  const states = async () =>
    (await dbOf(server.services.store).selectFrom("documentComments").select(["body", "state"]).orderBy("body").execute()).map((r) => `${r.body}:${r.state}`);

  before(async () => {
    server = await startTestServer({ ...TEST_APP_ENV, QUIRE_COMMENTS_PER_ADDRESS: "100" });
    await createAccount(server.services.store, "other");
    await givePassword(server, "tester");
    await givePassword(server, "other");
    await seedDoc(server, { accountId: 1, username: "tester" }, { name: "moderated", state: "A" });
    tester = await signInHttp(server.url, "tester");
    other = await signInHttp(server.url, "other");
    await tester.refreshCsrf();
    await other.refreshCsrf();
  });
  after(async () => server?.close());

  test("another account sees none of them and changes none; the owner deletes several at once", async () => {
    for (const t of ["one", "two", "three"]) assert.equal((await comment("moderated", t)).status, 200);
    const ids = (await dbOf(server.services.store).selectFrom("documentComments").select("commentId").execute()).map((r) => r.commentId);
    const page = await (await other.get("/app/comments")).text();
    assert.match(page, /Waiting for approval: 0 comments/);
    for (const action of ["approve", "hide", "delete"]) {
      const res = await other.post("/app/comments", { _csrf: other.csrf, do: action, state: "pending", ids });
      assert.equal(res.status, 303);
      assert.match(res.headers.get("location") ?? "", /done=\w+&n=0$/);
    }
    assert.deepEqual(await states(), ["one:pending", "three:pending", "two:pending"]);

    const mine = await (await tester.get("/app/comments")).text();
    assert.match(mine, /Waiting for approval: 3 comments/);
    assert.match(mine, /<span class="badge">3<span class="sr-only"> waiting for approval<\/span><\/span>/);
    const res = await tester.post("/app/comments", { _csrf: tester.csrf, do: "delete", state: "pending", ids: ids.slice(0, 2) });
    assert.equal(res.status, 303);
    assert.match(res.headers.get("location") ?? "", /done=delete&n=2$/);
    assert.equal((await states()).length, 1);
    const after = await (await tester.get(res.headers.get("location")!)).text();
    assert.match(after, /2 comments deleted\./);
    assert.equal((await tester.post("/app/comments", { _csrf: tester.csrf, do: "publish", ids })).status, 400);
  });

  test("publishing at once: the next comment appears under the reader without approval", async () => {
    assert.equal((await tester.post("/app/comments/settings", { _csrf: tester.csrf, publishAtOnce: "1" })).status, 303);
    assert.match(await (await tester.get("/app/comments?done=settings")).text(), /id="publish-at-once" name="publishAtOnce" value="1" checked/);
    const res = await comment("moderated", "straight through");
    assert.match(((await res.json()) as { message: string }).message, /is published/);
    assert.match(await (await fetch(`${server.url}/tester/docs/moderated`)).text(), /straight through/);
    assert.equal((await tester.post("/app/comments/settings", { _csrf: tester.csrf })).status, 303);
    assert.equal(await server.services.store.accounts.publishesCommentsAtOnce(1), false);
    // Without the token, nothing changes.
    assert.equal((await tester.post("/app/comments/settings", { publishAtOnce: "1" })).status, 403);
    assert.equal(await server.services.store.accounts.publishesCommentsAtOnce(1), false);
  });
});
