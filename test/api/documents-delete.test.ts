import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { acceptedUrlUpload, call, type Caller, callerOf, list, refused } from "../helpers/api-client.ts";
import { assertEmptyOk, FORMATS } from "../helpers/api-answers.ts";
import { accountIdOf, otherCaller } from "../helpers/api-seed.ts";
import { fields, fileField, parseRsp, postMultipart, signedUpload } from "../helpers/multipart.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { dbOf } from "../helpers/store-db.ts";

/** `svc.document.delete` (decisions §8): record, jobs, blobs, bookmarks and embeds go; other names are passed over. */

let server: TestServer;
let c: Caller;
let me: number;
let other: Caller & { accountId: number };
let n = 0;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  me = await accountIdOf(server, c);
  other = await otherCaller(server, "other");
});
after(() => server.close());

const doc = (who: Caller = c) => acceptedUrlUpload(server, who, { name: `del-${n++}` });

/** A real file upload: its original is in the blob store. */
async function uploaded(fixture: string, name: string): Promise<{ documentId: string; blobId: string }> {
  const data = await readFile(join(FIXTURES, fixture));
  const res = await postMultipart(`${server.uploadUrl}/1_0`, [...fields(signedUpload(server.account, { name, format: "json" })), fileField(data, fixture)]);
  const rsp = parseRsp(res, "json");
  assert.equal(rsp.stat, "ok", res.text);
  const rec = await server.services.store.documents.getById(me, rsp.document!.documentId as string);
  assert.ok(rec);
  return { documentId: rec.documentId, blobId: rec.blobId };
}

const blobsUnder = async (blobId: string) => (await server.listBlobFiles()).filter((f) => f.startsWith(blobKeys.prefix(blobId)));
const jobsOf = async (documentId: string) => dbOf(server.services.store).selectFrom("jobs").select("id").where("documentId", "=", documentId).execute();

describe("names (required)", () => {
  for (const format of FORMATS) {
    test(`${format}: absent, empty, or a list with no items is 200 on names`, async () => {
      await refused(c, "document.delete", {}, "200", "names", format);
      await refused(c, "document.delete", { names: "" }, "200", "names", format);
      await refused(c, "document.delete", { names: " , ," }, "200", "names", format);
    });
  }

  test("format and jsonCallback are checked after names", async () => {
    await refused(c, "document.delete", { names: "x", jsonCallback: "1x" }, "201", "jsonCallback");
  });
});

describe("deleting", () => {
  for (const format of FORMATS) {
    test(`${format}: answers an empty ok; the record, its job and its name are gone; unknown names passed over`, async () => {
      const a = await doc();
      const b = await doc();
      const keep = await doc();
      const res = await call(c, "document.delete", { names: ` ${a.name as string},no-such-name,Not A Name,${b.name as string},${a.name as string}` }, format);
      assertEmptyOk(res, format);
      for (const d of [a, b]) {
        assert.equal(await server.services.store.documents.getById(me, d.documentId as string), undefined);
        assert.deepEqual(await jobsOf(d.documentId as string), []);
      }
      assert.ok(await server.services.store.documents.getById(me, keep.documentId as string), "others stay");
      const listed = (await list(c, { pageSize: "100" })).docs.map((d) => d.documentId);
      assert.ok(!listed.includes(a.documentId) && !listed.includes(b.documentId) && listed.includes(keep.documentId));
      // the name is free again
      const again = await acceptedUrlUpload(server, c, { name: a.name as string });
      assert.equal(again.name, a.name);
    });

    test(`${format}: idempotent — deleting again, or only unknown names, is the same empty ok`, async () => {
      const a = await doc();
      assertEmptyOk(await call(c, "document.delete", { names: a.name as string }, format), format);
      assertEmptyOk(await call(c, "document.delete", { names: a.name as string }, format), format);
      assertEmptyOk(await call(c, "document.delete", { names: "never-was" }, format), format);
    });

    test(`${format}: another account's name is passed over and its document stays`, async () => {
      const theirs = await doc(other);
      const before = await server.countRecords();
      assertEmptyOk(await call(c, "document.delete", { names: theirs.name as string }, format), format);
      assert.deepEqual(await server.countRecords(), before);
      assert.ok(await server.services.store.documents.getById(other.accountId, theirs.documentId as string));
    });
  }

  test("POST works as GET does", async () => {
    const a = await doc();
    assertEmptyOk(await call(c, "document.delete", { names: a.name as string }, "json", true), "json");
    assert.equal(await server.services.store.documents.getById(me, a.documentId as string), undefined);
  });

  test("every blob under the document's prefix goes, and only those", async () => {
    const a = await uploaded("pdf-quartz-firefox-1page.pdf", "blob-a");
    const b = await uploaded("pdf-quartz-firefox-1page.pdf", "blob-b");
    // as if converted: more objects under the prefix
    const { Readable } = await import("node:stream");
    await server.services.blobs.put(blobKeys.pdf(a.blobId), Readable.from(["x"]));
    await server.services.blobs.put(blobKeys.page(a.blobId, 1, "read", "webp"), Readable.from(["x"]));
    await server.services.blobs.put(blobKeys.cover(a.blobId, "small", "jpg"), Readable.from(["x"]));
    assert.equal((await blobsUnder(a.blobId)).length, 4);
    assertEmptyOk(await call(c, "document.delete", { names: "blob-a" }), "json");
    assert.deepEqual(await blobsUnder(a.blobId), []);
    assert.deepEqual(await blobsUnder(b.blobId), [blobKeys.original(b.blobId)], "another document's files stay");
  });

  test("bookmarks and embeds of the document go with it", async () => {
    const a = await doc();
    const now = Date.now();
    const db = dbOf(server.services.store);
    await db.insertInto("bookmarks").values({ bookmarkId: "00000000-0000-4000-8000-0000000000aa", accountId: other.accountId, documentId: a.documentId as string, title: "", description: "", page: 1, createdAt: now, updatedAt: now }).execute();
    await db.insertInto("embeds").values({ accountId: me, documentId: a.documentId as string, readerStartPage: 1, width: 525, height: 340, createdAt: now, updatedAt: now }).execute();
    assertEmptyOk(await call(c, "document.delete", { names: a.name as string }), "json");
    assert.deepEqual(await db.selectFrom("bookmarks").select("bookmarkId").where("documentId", "=", a.documentId as string).execute(), []);
    assert.deepEqual(await db.selectFrom("embeds").select("id").where("documentId", "=", a.documentId as string).execute(), []);
  });

  test("an update after the delete finds nothing", async () => {
    const a = await doc();
    assertEmptyOk(await call(c, "document.delete", { names: a.name as string }), "json");
    const res = await call(c, "document.update", { name: a.name as string, title: "x" });
    assert.match(res.body, /"code":"300"/);
  });
});

describe("deleting a document while it converts", { timeout: 300_000 }, () => {
  let worker: TestWorker;
  before(async () => {
    worker = await startTestWorker(server, { officeTimeoutMs: 120_000 });
  });
  after(async () => worker?.stop());

  test("the worker skips it and leaves no record, job or file behind", async () => {
    const { documentId, blobId } = await uploaded("odp-symphony-100slides.odp", "slow-one");
    // wait until a worker holds one of its jobs (the deck's own, or one of its page ranges once it is
    // split), then until it has written something beyond the original
    const deadline = Date.now() + 120_000;
    for (;;) {
      const jobs = await dbOf(server.services.store).selectFrom("jobs").select("state").where("documentId", "=", documentId).execute();
      const job = jobs.find((j) => j.state === "running");
      if (job && (await blobsUnder(blobId)).length > 1) break;
      if (job && Date.now() > deadline - 110_000 && (await blobsUnder(blobId)).length === 1) {
        // still in LibreOffice after 10 s: delete during the office step
        break;
      }
      assert.ok(Date.now() < deadline, "the conversion started");
      await sleep(50);
    }
    const state = (await server.services.store.documents.getById(me, documentId))?.state;
    assert.equal(state, "P", "deleted while processing");
    if (process.env.QUIRE_DEBUG_DELETE) console.log("blobs at delete", await blobsUnder(blobId));
    assertEmptyOk(await call(c, "document.delete", { names: "slow-one" }, "xml"), "xml");
    assert.equal(await server.services.store.documents.getById(me, documentId), undefined);
    assert.deepEqual(await jobsOf(documentId), []);
    // the worker notices (lease lost, or publish finds no record) and cleans up after itself
    const idle = Date.now() + 60_000;
    while ((await blobsUnder(blobId)).length > 0 || worker.office.slotInfo().some((s) => s.state === "busy")) {
      assert.ok(Date.now() < idle, `files left: ${(await blobsUnder(blobId)).join(", ")}`);
      await sleep(100);
    }
    await sleep(6_000); // past a heartbeat: nothing comes back
    await worker.stop();
    assert.equal(await server.services.store.documents.getForConversion(documentId), undefined);
    assert.deepEqual(await jobsOf(documentId), []);
    assert.deepEqual(await blobsUnder(blobId), []);
  });
});

