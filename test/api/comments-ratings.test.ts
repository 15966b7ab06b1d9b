import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { assertEmptyOk, assertError, FORMATS, okRsp, parseXml, type Format } from "../helpers/api-answers.ts";
import { call, callerOf, getNormal, list, sign, type Caller } from "../helpers/api-client.ts";
import { otherCaller, seedDoc } from "../helpers/api-seed.ts";
import { createDatabase, dropDatabase, postgresUnavailable } from "../helpers/dialects.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * decisions §16 through the API, on both databases: `rating` and `ratingDist` in every document
 * answer (XML and JSON, cached lists included), one rating per reader and day, the three
 * moderation operations with every error code they answer, the flags, the `comment.created`
 * delivery, and deleting a document taking its comments and ratings with it.
 */

const HOSTILE_NAME = `<script>alert("n")</script> & "Bob" <img src=x onerror=alert(1)>`;
const HOSTILE_TEXT = `Nice <b>doc</b>!\n<script>alert(document.cookie)</script>\nSee https://evil.example/x?a=1&b=<2> ]]> '`;

type Json = { rsp: { stat: string; _content?: Record<string, unknown> } };
type CommentJson = { commentId: string; documentId: string; name: string; author: string; text: string; state: string; created: string; updated: string };


/** A reader's form POST on the public pages (no script: a form body; `json` asks for the script's answer). */
async function postForm(server: TestServer, path: string, fields: Record<string, string>, opts: { userAgent?: string; json?: boolean; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "user-agent": opts.userAgent ?? "reader-a",
      ...(opts.json ? { accept: "application/json" } : {}),
      ...opts.headers,
    },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  return { status: res.status, body: await res.text(), type: res.headers.get("content-type") ?? "" };
}

async function commentsOf(c: Caller, params: Record<string, string>, format: Format): Promise<{ totalCount: number; more: boolean; items: CommentJson[] }> {
  const res = await call(c, "document_comments.list", params, format);
  const rsp = okRsp(res, format);
  if (format === "json") {
    const result = (rsp._content as { result: { totalCount: number; more: boolean; _content: Array<{ comment: CommentJson }> } }).result;
    return { totalCount: result.totalCount, more: result.more, items: result._content.map((i) => i.comment) };
  }
  const result = (parseXml(res.body, ["comment"]) as { rsp: { result: { totalCount: string; more: string; comment?: CommentJson[] } } }).rsp.result;
  return { totalCount: Number(result.totalCount), more: result.more === "true", items: result.comment ?? [] };
}

const pgSkip = await postgresUnavailable();

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`comments and ratings through the API (${dialect})`, { skip: dialect === "postgres" ? pgSkip : undefined }, () => {
    let server: TestServer;
    let me: Caller;
    let dbName: string | undefined;
    const owner = () => ({ accountId: 1, username: "tester" });

    before(async () => {
      const env: Record<string, string> = { QUIRE_RATE_PER_SECOND: "0", QUIRE_COMMENTS_PER_ADDRESS: "1000", QUIRE_RATINGS_PER_ADDRESS: "1000" };
      if (dialect === "postgres") {
        dbName = `quire_test_${randomBytes(6).toString("hex")}`;
        env.QUIRE_DATABASE_URL = await createDatabase(dbName);
      }
      server = await startTestServer(env);
      me = callerOf(server);
    });
    after(async () => {
      await server?.close();
      if (dbName) await dropDatabase(dbName);
    });

    test("rating and ratingDist in every document answer, one rating per reader and day, cached lists never stale", async () => {
      const doc = await seedDoc(server, owner(), { name: "rated-doc", state: "A", pageCount: 3 });
      for (const format of FORMATS) {
        const found = (await list(me, { documentStates: "A" }, format)).docs.find((d) => d.name === "rated-doc")!;
        assert.equal(String(found.rating), "0", format);
        assert.equal(found.ratingDist, "0,0,0,0,0", format);
      }
      const path = `/tester/docs/rated-doc/rating`;
      const first = await postForm(server, path, { stars: "4" }, { json: true, userAgent: "reader-a" });
      assert.equal(first.status, 200, first.body);
      assert.deepEqual(JSON.parse(first.body).ratingDist, "0,0,0,1,0");
      assert.equal((await postForm(server, path, { stars: "2" }, { json: true, userAgent: "reader-b" })).status, 200);
      // reader-a again the same day: replaced, not added
      const again = await postForm(server, path, { stars: "5" }, { json: true, userAgent: "reader-a" });
      assert.equal(JSON.parse(again.body).ratingDist, "0,1,0,0,1");
      assert.equal(JSON.parse(again.body).rating, 3.5);
      // the same rating twice changes nothing
      await postForm(server, path, { stars: "5" }, { json: true, userAgent: "reader-a" });
      for (const format of FORMATS) {
        const found = (await list(me, { documentStates: "A" }, format)).docs.find((d) => d.name === "rated-doc")!;
        assert.equal(String(found.rating), "3.5", `${format}: the cached list moved with the rating`);
        assert.equal(found.ratingDist, "0,1,0,0,1");
      }
      // one decimal
      await postForm(server, path, { stars: "1" }, { json: true, userAgent: "reader-c" });
      const json = (await list(me, {}, "json")).docs.find((d) => d.name === "rated-doc")!;
      assert.equal(json.rating, 2.7);
      assert.equal(typeof json.rating, "number");
      // the update answer and responseParams carry them too
      const updated = JSON.parse((await call(me, "document.update", { name: "rated-doc", title: "Rated" })).body) as Json;
      assert.equal((updated.rsp._content?.document as { ratingDist: string }).ratingDist, "1,1,0,0,1");
      const kept = (await list(me, { responseParams: "name,rating,ratingDist" }, "xml")).docs.find((d) => d.name === "rated-doc");
      assert.deepEqual(kept, { name: "rated-doc", rating: "2.7", ratingDist: "1,1,0,0,1" });
      const rows = await dbOf(server.services.store).selectFrom("documentRatings").selectAll().where("documentId", "=", doc.documentId).execute();
      assert.equal(rows.length, 3, "one row per reader");
      assert.ok(rows.every((r) => /^[A-Za-z0-9_-]{22}$/.test(r.readerKey)), "a reader is a key, no address or user agent");
      // one reader's ratings sent at once: still one rating, the counts moved once each
      const burst = await Promise.all([1, 2, 3, 4, 5, 1, 2, 3, 4, 5].map((n) => postForm(server, path, { stars: String(n) }, { json: true, userAgent: "reader-e" })));
      assert.ok(burst.every((r) => r.status === 200));
      const after = (await list(me, {}, "json")).docs.find((d) => d.name === "rated-doc")!;
      assert.equal((after.ratingDist as string).split(",").map(Number).reduce((a, b) => a + b, 0), 4, "four readers, four ratings");
      const mine = await dbOf(server.services.store).selectFrom("documentRatings").select("stars").where("documentId", "=", doc.documentId).execute();
      assert.equal(mine.length, 4);
      await postForm(server, path, { stars: "2" }, { json: true, userAgent: "reader-e" });
      assert.equal((await list(me, { responseParams: "ratingDist" }, "json")).docs.find((d) => d.ratingDist !== "0,0,0,0,0")?.ratingDist, "1,2,0,0,1");
      // a form without script gets a page; bad stars are refused
      const page = await postForm(server, path, { stars: "3" }, { userAgent: "reader-d" });
      assert.equal(page.status, 200);
      assert.match(page.type, /text\/html/);
      assert.match(page.body, /you rated this document 3 stars/);
      assert.equal((await postForm(server, path, { stars: "6" }, { json: true })).status, 400);
      assert.equal((await postForm(server, path, { stars: "<b>" }, { json: true })).status, 400);
    });

    test("comments: held for approval, listed, approved, hidden, deleted, in both formats; the webhook carries them as text", async () => {
      const doc = await seedDoc(server, owner(), { name: "talked-doc", state: "A", pageCount: 2 });
      await call(me, "webhook.set", { url: "https://hooks.example.com/quire", events: "comment.created" });
      const posted = await postForm(server, "/tester/docs/talked-doc/comments", { author: HOSTILE_NAME, text: HOSTILE_TEXT }, { json: true });
      assert.equal(posted.status, 200, posted.body);
      assert.match(JSON.parse(posted.body).message, /once the publisher has approved it/);
      for (const format of FORMATS) {
        const { totalCount, items } = await commentsOf(me, { name: "talked-doc" }, format);
        assert.equal(totalCount, 1);
        const c = items[0]!;
        assert.equal(c.author, HOSTILE_NAME.replace(/\s+/g, " "), `${format}: the name exactly as given`);
        assert.equal(c.text, HOSTILE_TEXT, `${format}: the text exactly as given`);
        assert.equal(c.state, "pending");
        assert.equal(c.documentId, doc.documentId);
        assert.equal(c.name, "talked-doc");
      }
      const raw = await call(me, "document_comments.list", { documentId: doc.documentId }, "xml");
      parseXml(raw.body);
      assert.doesNotMatch(raw.body, /<script|<b>|<img/, "markup only ever as escaped text in XML");

      // the delivery was written with the comment, the comment inside as JSON text
      const delivery = await dbOf(server.services.store).selectFrom("webhookDeliveries").selectAll().where("event", "=", "comment.created").executeTakeFirstOrThrow();
      const body = JSON.parse(delivery.body) as { event: string; document: { documentId: string }; comment: CommentJson };
      assert.equal(body.event, "comment.created");
      assert.equal(body.document.documentId, doc.documentId);
      assert.equal(body.comment.text, HOSTILE_TEXT);
      assert.equal(body.comment.state, "pending");

      const id = (await commentsOf(me, {}, "json")).items.find((c) => c.documentId === doc.documentId)!.commentId;
      for (const format of FORMATS) {
        const res = await call(me, "document_comment.update", { commentId: id, state: format === "xml" ? "hidden" : "approved" }, format);
        const rsp = okRsp(res, format);
        const state = format === "json" ? (rsp._content as { comment: CommentJson }).comment.state : (rsp.comment as CommentJson).state;
        assert.equal(state, format === "xml" ? "hidden" : "approved");
      }
      assert.equal((await commentsOf(me, { name: doc.documentId, states: "approved" }, "json")).totalCount, 1, "name accepts a documentId");
      assert.equal((await commentsOf(me, { name: "talked-doc", states: "pending,hidden" }, "xml")).totalCount, 0);

      // the reader shows it, as text, no link made
      const reader = await (await fetch(`${server.url}/tester/docs/talked-doc/comments`)).text();
      assert.ok(reader.includes("&lt;script&gt;alert(document.cookie)&lt;/script&gt;"));
      assert.ok(!reader.includes("<script>alert"));
      assert.ok(!/<a [^>]*evil\.example/.test(reader), "an address in a comment stays text");
      assert.ok(reader.includes(`<span class="comment-count">(1)</span>`), "the approved count, kept on the document row");
      await call(me, "document_comment.update", { commentId: id, state: "pending" });
      assert.ok((await (await fetch(`${server.url}/tester/docs/talked-doc/comments`)).text()).includes(`<span class="comment-count">(0)</span>`));
      await call(me, "document_comment.update", { commentId: id, state: "approved" });

      for (const format of FORMATS) {
        const extra = await postForm(server, "/tester/docs/talked-doc/comments", { author: "x", text: `to delete ${format}` }, { json: true });
        assert.equal(extra.status, 200);
        const target = (await commentsOf(me, { name: "talked-doc", states: "pending" }, "json")).items[0]!;
        assertEmptyOk(await call(me, "document_comment.delete", { commentId: target.commentId }, format), format);
        assertError(await call(me, "document_comment.delete", { commentId: target.commentId }, format), format, "201", "commentId");
      }
    });

    test("every error code of the three operations, in both formats", async () => {
      await seedDoc(server, owner(), { name: "errors-doc", state: "A" });
      await postForm(server, "/tester/docs/errors-doc/comments", { author: "a", text: "b" }, { json: true });
      const someId = (await commentsOf(me, { name: "errors-doc" }, "json")).items[0]!.commentId;
      const other = await otherCaller(server, `other${dialect}`);
      for (const format of FORMATS) {
        const no = (action: string, params: Record<string, string>, code: string, field?: string) =>
          call(me, action, params, format).then((res) => assertError(res, format, code, field));
        // 009, 010, 011: the conventions of every operation
        assertError(await getNormal(me, { action: "svc.document_comments.list", format }), format, "009");
        assertError(await getNormal(me, sign({ action: "svc.document_comments.list", apiKey: "a".repeat(32), format }, "x")), format, "010");
        assertError(await getNormal(me, { action: "svc.document_comments.list", apiKey: me.apiKey, format, signature: "0".repeat(32) }), format, "011");
        await no("document_comments.list", { documentId: "nope" }, "300");
        await no("document_comments.list", { name: "no-such-doc" }, "300");
        await no("document_comments.list", { documentId: "x", name: "y" }, "201", "name");
        await no("document_comments.list", { states: "pending,deleted" }, "201", "states");
        await no("document_comments.list", { commentSortBy: "author" }, "201", "commentSortBy");
        await no("document_comments.list", { pageSize: "101" }, "201", "pageSize");
        await no("document_comments.list", { responseParams: "text,secret" }, "201", "responseParams");
        await no("document_comment.update", { state: "approved" }, "200", "commentId");
        await no("document_comment.update", { commentId: "123", state: "approved" }, "201", "commentId");
        await no("document_comment.update", { commentId: someId }, "200", "state");
        await no("document_comment.update", { commentId: someId, state: "published" }, "201", "state");
        await no("document_comment.update", { commentId: "00000000-0000-4000-8000-000000000000", state: "approved" }, "201", "commentId");
        await no("document_comment.delete", {}, "200", "commentId");
        await no("document_comment.delete", { commentId: "x'; drop table documents; --" }, "201", "commentId");
        // another account's comment is as if it did not exist, and stays as it was
        assertError(await call(other, "document_comment.update", { commentId: someId, state: "hidden" }, format), format, "201", "commentId");
        assertError(await call(other, "document_comment.delete", { commentId: someId }, format), format, "201", "commentId");
        assert.equal((await commentsOf(other, {}, format)).totalCount, 0, "no other account's comments");
        assert.equal((await commentsOf(me, { name: "errors-doc" }, format)).items[0]?.state, "pending");
      }
      // paging as documents.list
      for (let i = 0; i < 3; i++) await postForm(server, "/tester/docs/errors-doc/comments", { author: "p", text: `page ${i}` }, { json: true });
      const page = await commentsOf(me, { name: "errors-doc", pageSize: "2", startIndex: "1", resultOrder: "desc" }, "json");
      assert.equal(page.totalCount, 4);
      assert.equal(page.more, true);
      assert.deepEqual(page.items.map((c) => c.text), ["page 1", "page 0"]);
    });

    test("flags: off hides what exists and refuses new ones (saying why); on shows them again", async () => {
      await seedDoc(server, owner(), { name: "flag-doc", state: "A", pageCount: 1 });
      await server.services.store.accounts.setPublishesCommentsAtOnce(1, true);
      try {
        const published = await postForm(server, "/tester/docs/flag-doc/comments", { author: "Ann", text: "Visible words" }, { json: true });
        assert.match(JSON.parse(published.body).message, /is published/);
      } finally {
        await server.services.store.accounts.setPublishesCommentsAtOnce(1, false);
      }
      await postForm(server, "/tester/docs/flag-doc/rating", { stars: "5" }, { json: true });
      const readerHtml = () => fetch(`${server.url}/tester/docs/flag-doc`).then((r) => r.text());
      assert.match(await readerHtml(), /Visible words/);
      assert.match(await readerHtml(), /Rate this document/);
      // The embed rates too, but carries no comments.
      const embed = await (await fetch(`${server.url}/tester/docs/flag-doc/embed`)).text();
      assert.match(embed, /Rate this document/);
      assert.match(embed, /name="embed" value="1"/);
      assert.doesNotMatch(embed, /Visible words|comment-form/);

      await call(me, "document.update", { name: "flag-doc", commentsAllowed: "false", ratingsAllowed: "false" });
      const off = (await list(me, {}, "xml")).docs.find((d) => d.name === "flag-doc")!;
      assert.equal(off.rating, "0");
      assert.equal(off.ratingDist, "0,0,0,0,0");
      const page = await readerHtml();
      assert.doesNotMatch(page, /Visible words/);
      assert.doesNotMatch(page, /Rate this document/);
      const c = await postForm(server, "/tester/docs/flag-doc/comments", { author: "Ann", text: "more" }, { json: true });
      assert.equal(c.status, 409);
      assert.equal(JSON.parse(c.body).message, "Comments are turned off for this document.");
      const r = await postForm(server, "/tester/docs/flag-doc/rating", { stars: "1" }, { json: true, userAgent: "someone-new" });
      assert.equal(r.status, 409);
      assert.equal(JSON.parse(r.body).message, "Ratings are turned off for this document.");
      assert.equal((await fetch(`${server.url}/tester/docs/flag-doc/comments`)).status, 404);

      await call(me, "document.update", { name: "flag-doc", commentsAllowed: "true", ratingsAllowed: "true" });
      const on = (await list(me, {}, "json")).docs.find((d) => d.name === "flag-doc")!;
      assert.equal(on.rating, 5);
      assert.equal(on.ratingDist, "0,0,0,0,1", "kept while off, shown again, nothing added meanwhile");
      assert.match(await readerHtml(), /Visible words/);
    });

    test("deleting a document deletes its comments and ratings", async () => {
      const doc = await seedDoc(server, owner(), { name: "gone-doc", state: "A" });
      await postForm(server, "/tester/docs/gone-doc/comments", { author: "a", text: "b" }, { json: true });
      await postForm(server, "/tester/docs/gone-doc/rating", { stars: "3" }, { json: true });
      const db = dbOf(server.services.store);
      const count = async (table: "documentComments" | "documentRatings") =>
        Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as("n")).where("documentId", "=", doc.documentId).executeTakeFirstOrThrow()).n);
      assert.equal(await count("documentComments"), 1);
      assert.equal(await count("documentRatings"), 1);
      assertEmptyOk(await call(me, "document.delete", { names: "gone-doc" }, "xml"), "xml");
      assert.equal(await count("documentComments"), 0);
      assert.equal(await count("documentRatings"), 0);
    });
  });
}
