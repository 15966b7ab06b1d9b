import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { appAccount, signInHttp, type AppSession } from "../helpers/app-client.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** Hostile requests to the upload, folder and sharing routes of the app (issue 14 items 3-5). */
const MAX_BYTES = 64 * 1024;

describe("upload, folders and sharing routes against hostile requests", { timeout: 120_000 }, () => {
  let server: TestServer;
  let alice: AppSession;
  let mallory: AppSession;
  let aliceFolder: string;

  before(async () => {
    server = await startTestServer({ QUIRE_PASSWORD_HASH_COST: "12", QUIRE_MAX_UPLOAD_BYTES: String(MAX_BYTES) });
    await appAccount(server, "tester");
    await appAccount(server, "mallory");
    [alice, mallory] = await Promise.all([signInHttp(server.url, "tester"), signInHttp(server.url, "mallory")]);
    const made = await alice.post("/app/folders", { _csrf: alice.csrf, folderName: "Private plans" });
    aliceFolder = /\/app\/folders\/([0-9a-f-]{36})/.exec(made.headers.get("location") ?? "")![1]!;
  });
  after(() => server?.close());

  const upload = (s: AppSession, file: Blob, name: string, headers: Record<string, string> = {}, fields: Record<string, string> = {}) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append("file", file, name);
    return fetch(`${server.url}/app/upload`, { method: "POST", body: form, headers: { cookie: s.cookie, accept: "application/json", ...headers } });
  };

  test("every change needs the session's CSRF token; without it nothing is stored", async () => {
    const pdf = new Blob([await readFile(join(FIXTURES, "pdf-rotated-page.pdf"))]);
    const before = await server.countRecords();
    assert.equal((await upload(alice, pdf, "a.pdf")).status, 403);
    assert.equal((await upload(alice, pdf, "a.pdf", { "x-csrf-token": mallory.csrf })).status, 403, "another session's token");
    for (const [path, fields] of [
      ["/app/upload-url", { slurpUrl: "https://example.com/a.pdf" }],
      ["/app/folders", { folderName: "x" }],
      [`/app/folders/${aliceFolder}/edit`, { folderName: "y" }],
      [`/app/folders/${aliceFolder}/delete`, {}],
    ] as const) {
      assert.equal((await alice.post(path, fields)).status, 403, path);
    }
    assert.deepEqual(await server.countRecords(), before);
    assert.ok(await server.services.store.folders.get(1, aliceFolder));
  });

  test("the size limit is the API's: a file over it is 413 in words and leaves nothing", async () => {
    const before = await server.countRecords();
    const res = await upload(alice, new Blob([Buffer.alloc(MAX_BYTES + 1)]), "big.pdf", { "x-csrf-token": alice.csrf });
    assert.equal(res.status, 413);
    assert.match((await res.json()).error, /larger than the 64 KiB this server accepts/);
    assert.deepEqual(await server.countRecords(), before);
    assert.deepEqual((await server.listBlobFiles()).filter((f) => !f.startsWith("tmp")), []);
  });

  test("one account never sees or changes another's folders or documents", async () => {
    assert.equal((await mallory.get(`/app/folders/${aliceFolder}`)).status, 400);
    await mallory.post(`/app/folders/${aliceFolder}/delete`, { _csrf: mallory.csrf });
    await mallory.post(`/app/folders/${aliceFolder}/edit`, { _csrf: mallory.csrf, folderName: "Owned" });
    assert.equal((await server.services.store.folders.get(1, aliceFolder))?.name, "Private plans");
    // Uploading into another's folder is the API's 201 on folderIds.
    const pdf = new Blob([await readFile(join(FIXTURES, "pdf-rotated-page.pdf"))]);
    const res = await upload(mallory, pdf, "a.pdf", { "x-csrf-token": mallory.csrf }, { folderIds: aliceFolder });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).field, "folderIds");
    const mine = await upload(alice, pdf, "mine.pdf", { "x-csrf-token": alice.csrf });
    const { document } = (await mine.json()) as { document: { documentId: string } };
    assert.equal((await mallory.get(`/app/documents/${document.documentId}/share`)).status, 404);
    const add = await mallory.post(`/app/folders/${aliceFolder}/add`, { _csrf: mallory.csrf, documentId: document.documentId });
    assert.equal(add.status, 400);
  });

  test("what people type comes back as text: folder names, descriptions, file names", async () => {
    const evil = `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`;
    const made = await alice.post("/app/folders", { _csrf: alice.csrf, folderName: evil, folderDescription: evil });
    const page = await (await alice.get(made.headers.get("location")!)).text();
    assert.ok(!page.includes("<script>alert(1)") && !page.includes("<img src=x"), "no markup from the folder's fields");
    const list = await (await alice.get("/app/folders")).text();
    assert.ok(!list.includes("<script>alert(1)") && !list.includes("<img src=x"));
    const pdf = new Blob([await readFile(join(FIXTURES, "pdf-rotated-page.pdf"))]);
    const res = await upload(alice, pdf, `${evil}.pdf`, { "x-csrf-token": alice.csrf });
    assert.equal(res.status, 201);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const { document } = (await res.json()) as { document: { title: string; href: string } };
    assert.match(document.title, /<img src=x onerror=alert\(2\)>$/, "the name's last part is the title, as in the API");
    const shown = await (await alice.get(document.href)).text();
    assert.ok(!shown.includes("<img src=x"), "the document's page shows the title as text");
  });
});
