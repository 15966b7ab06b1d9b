import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** decisions §7: a document uploaded with folderIds gets its bookmarks there only when it becomes active. */
let server: TestServer;
let client: QuireClient;
before(async () => {
  server = await startTestServer();
  client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
});
after(() => server.close());

type Listed = { result: { totalCount: number; _content: Array<Record<string, Record<string, unknown>>> } };

test("bookmarks appear in the upload's folders when the document becomes active, once", async () => {
  const folderA = (unwrap(await client.call("folder.add", { folderName: "Reports" })).folder as { folderId: string }).folderId;
  const folderB = (unwrap(await client.call("folder.add", { folderName: "Archive" })).folder as { folderId: string }).folderId;
  const doc = unwrap(await client.call("document.url_upload", { slurpUrl: "https://example.com/q3.pdf", folderIds: `${folderA},${folderB}` }))
    .document as { documentId: string; folders: string[] };
  assert.deepEqual(doc.folders, [folderA, folderB]);

  const inFolder = async (folderId: string) => unwrap(await client.call("bookmarks.list", { folderId })) as unknown as Listed;
  const items = async () =>
    (unwrap(await client.call("folders.list", {})) as unknown as Listed).result._content.map((f) => f.folder!.items);
  assert.equal((await inFolder(folderA)).result.totalCount, 0, "nothing while processing");
  assert.deepEqual(await items(), [0, 0]);

  const activate = () =>
    server.services.store.documents.markActive(doc.documentId, { pageCount: 3, coverWidth: 600, coverHeight: 800, description: "Q3", name: undefined }, Date.now());
  assert.equal(await activate(), true);
  for (const folderId of [folderA, folderB]) {
    const listed = await inFolder(folderId);
    assert.equal(listed.result.totalCount, 1);
    const b = listed.result._content[0]!.bookmark!;
    assert.equal(b.documentId, doc.documentId);
    assert.equal(b.page, 1);
    assert.deepEqual(b.folders, [folderA, folderB]);
  }
  assert.deepEqual(await items(), [1, 1]);

  assert.equal(await activate(), false, "a second activation changes nothing");
  assert.equal((await inFolder(folderA)).result.totalCount, 1, "and adds no second bookmark");
});

test("a document that fails gets no bookmark", async () => {
  const folder = (unwrap(await client.call("folder.add", { folderName: "Failed ones" })).folder as { folderId: string }).folderId;
  const doc = unwrap(await client.call("document.url_upload", { slurpUrl: "https://example.com/bad.pdf", folderIds: folder })).document as { documentId: string };
  await server.services.store.documents.markFailed(doc.documentId, 3, "unreadable", Date.now());
  const listed = unwrap(await client.call("bookmarks.list", {})) as unknown as Listed;
  assert.equal(listed.result._content.filter((i) => i.bookmark!.documentId === doc.documentId).length, 0);
});
