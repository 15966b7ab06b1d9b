import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { acceptedUrlUpload, call, type Caller, callerOf } from "../helpers/api-client.ts";
import { assertDocument, assertEmptyOk, assertError } from "../helpers/api-answers.ts";
import { accountIdOf, otherCaller, seedDoc } from "../helpers/api-seed.ts";
import { fields, fileField, parseRsp, postMultipart, signedUpload } from "../helpers/multipart.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * decisions §5: a private document keeps its documentId as name (its address is its only
 * protection), and a documentId is accepted wherever a name is (issue 11 item 5, issue 15 item 4).
 */

const PDF = "pdf-quartz-firefox-1page.pdf";

describe("with a conversion worker", () => {
  let server: TestServer;
  let worker: TestWorker;
  let c: Caller;
  let me: number;

  before(async () => {
    server = await startTestServer();
    worker = await startTestWorker(server, { startOffice: false });
    c = callerOf(server);
    me = await accountIdOf(server, c);
  });
  after(async () => {
    await worker?.stop();
    await server?.close();
  });

  /** A real file upload with no name, converted to the end. */
  async function uploadConverted(extra: Record<string, string>): Promise<{ documentId: string; name: string }> {
    const data = await readFile(join(FIXTURES, PDF));
    const res = await postMultipart(`${server.uploadUrl}/1_0`, [...fields(signedUpload(server.account, { format: "json", ...extra })), fileField(data, PDF)]);
    const rsp = parseRsp(res, "json");
    assert.equal(rsp.stat, "ok", res.text);
    const documentId = rsp.document!.documentId as string;
    assert.equal(rsp.document!.name, documentId, "named by its documentId until converted");
    const deadline = Date.now() + 120_000;
    for (;;) {
      const d = await server.services.store.documents.getById(me, documentId);
      assert.ok(d);
      if (d.state !== "P") {
        assert.equal(d.state, "A", d.errorMessage);
        return { documentId, name: d.name };
      }
      assert.ok(Date.now() < deadline, "converted within 2 minutes");
      await sleep(100);
    }
  }

  const page = (name: string) => fetch(`${server.url}/${server.account.username}/docs/${name}`);

  test("a private upload without a name keeps its documentId as name once active, on the API and the web", async () => {
    const { documentId, name } = await uploadConverted({ title: "Quarterly Salaries", access: "private" });
    assert.equal(name, documentId, "no title-based name for a private document");
    // what the API answers
    const listed = assertDocument(await call(c, "document.update", { name: documentId, tags: "hr" }), "json");
    assert.equal(listed.name, documentId);
    assert.equal(listed.state, "A");
    // the page is at the documentId; the guessable title address finds nothing
    const found = await page(documentId);
    assert.equal(found.status, 200);
    assert.match(await found.text(), /noindex/);
    const guessed = await page("quarterly-salaries");
    assert.equal(guessed.status, 404);
    await guessed.body?.cancel();
  });

  test("a public upload without a name gets its title-based name; its documentId still finds it", async () => {
    const { documentId, name } = await uploadConverted({ title: "Annual Report" });
    assert.equal(name, "annual-report");
    // issue 15 item 4: a client that kept the name answered at upload
    const updated = assertDocument(await call(c, "document.update", { name: documentId, description: "kept the id" }), "json");
    assert.equal(updated.documentId, documentId);
    assert.equal(updated.name, "annual-report", "the update by documentId changes nothing else");
    assert.equal(updated.description, "kept the id");

    const other = await otherCaller(server, "reader");
    const mark = assertBookmark(await call(other, "bookmark.add", { documentUsername: server.account.username, name: documentId }));
    assert.equal(mark.documentId, documentId);
    assert.equal(mark.name, "annual-report");

    assertEmptyOk(await call(c, "document.delete", { names: documentId }), "json");
    assert.equal(await server.services.store.documents.getById(me, documentId), undefined, "deleted by its documentId");
    const gone = await page("annual-report");
    assert.equal(gone.status, 404);
    await gone.body?.cancel();
  });

  test("made private, a title-named document gets its documentId back; made public again, it keeps it", async () => {
    const { documentId, name } = await uploadConverted({ title: "Board Minutes" });
    assert.equal(name, "board-minutes");
    const hidden = assertDocument(await call(c, "document.update", { name: "board-minutes", access: "private" }), "json");
    assert.equal(hidden.access, "private");
    assert.equal(hidden.name, documentId);
    const old = await page("board-minutes");
    assert.equal(old.status, 404, "the guessable address is gone");
    await old.body?.cancel();
    const shown = assertDocument(await call(c, "document.update", { name: documentId, access: "public" }), "json");
    assert.equal(shown.name, documentId, "links shared while private keep working");
    // a name the caller chooses is the caller's, private or not
    const chosen = assertDocument(await call(c, "document.update", { name: documentId, newName: "minutes-2026" }), "json");
    assert.equal(chosen.name, "minutes-2026");
    const stillChosen = assertDocument(await call(c, "document.update", { name: "minutes-2026", access: "private" }), "json");
    assert.equal(stillChosen.name, "minutes-2026");
  });
});

describe("without a worker", () => {
  let server: TestServer;
  let c: Caller;
  let me: { accountId: number; username: string };

  before(async () => {
    server = await startTestServer();
    c = callerOf(server);
    me = { accountId: await accountIdOf(server, c), username: server.account.username };
  });
  after(() => server?.close());

  const activate = (documentId: string, name: string) =>
    server.services.store.documents.markActive(documentId, { pageCount: 1, coverWidth: 10, coverHeight: 10, description: undefined, name }, Date.now());

  test("made private while converting, it is not given its title-based name at success", async () => {
    const d = await acceptedUrlUpload(server, c, { title: "Secret Plans" });
    assertDocument(await call(c, "document.update", { name: d.documentId as string, access: "private" }), "json");
    assert.equal(await activate(d.documentId as string, "secret-plans"), true);
    const rec = await server.services.store.documents.getById(me.accountId, d.documentId as string);
    assert.equal(rec?.name, d.documentId);
    // a public one still gets it
    const p = await acceptedUrlUpload(server, c, { title: "Open Plans" });
    assert.equal(await activate(p.documentId as string, "open-plans"), true);
    assert.equal((await server.services.store.documents.getById(me.accountId, p.documentId as string))?.name, "open-plans");
  });

  test("another document's documentId is never given as a name, so a documentId names one document", async () => {
    const a = await seedDoc(server, me, { name: "first-doc" });
    const res = await call(c, "document.url_upload", { slurpUrl: "https://example.com/a.pdf", name: a.documentId });
    assertError(res, "json", "201", "name");
    const b = await seedDoc(server, me, { name: "second-doc" });
    assertError(await call(c, "document.update", { name: "second-doc", newName: a.documentId }), "json", "201", "newName");
    // its own documentId is free for it
    assert.equal(assertDocument(await call(c, "document.update", { name: "second-doc", newName: b.documentId }), "json").name, b.documentId);
  });

  test("delete by names and documentIds together; a name wins over another document's id", async () => {
    const a = await seedDoc(server, me, { name: "del-by-id" });
    const b = await seedDoc(server, me, { name: "del-by-name" });
    // written straight to the store: a document whose name is another one's documentId (older data)
    const squatter = await seedDoc(server, me, { name: "placeholder" });
    const victim = await seedDoc(server, me, { name: "victim-doc" });
    await dbOf(server.services.store).updateTable("documents").set({ name: victim.documentId }).where("documentId", "=", squatter.documentId).execute();
    assertEmptyOk(await call(c, "document.delete", { names: `${a.documentId},del-by-name,${victim.documentId}` }), "json");
    const left = async (id: string) => (await server.services.store.documents.getById(me.accountId, id)) !== undefined;
    assert.deepEqual([await left(a.documentId), await left(b.documentId), await left(squatter.documentId), await left(victim.documentId)], [false, false, false, true]);
  });
});

function assertBookmark(res: { body: string }): Record<string, unknown> {
  const rsp = (JSON.parse(res.body) as { rsp: { stat: string; _content?: { bookmark?: Record<string, unknown> } } }).rsp;
  assert.equal(rsp.stat, "ok", res.body);
  assert.ok(rsp._content?.bookmark);
  return rsp._content.bookmark;
}
