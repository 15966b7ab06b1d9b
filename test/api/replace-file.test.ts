import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { sweep } from "../../src/jobs/sweeper.ts";
import { call, callerOf, rawHttp } from "../helpers/api-client.ts";
import { AppClient, givePassword, TEST_APP_ENV } from "../helpers/app-client.ts";
import { postgresUnavailable } from "../helpers/dialects.ts";
import { fileField, fields, multipartBody, newBoundary, parseRsp, postMultipart, signedUpload } from "../helpers/multipart.ts";
import { numberedPagesPdf } from "../helpers/numbered-pages-pdf.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { settled, until } from "../helpers/poll.ts";
import type { TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { fixtureHost, startServerOn } from "../helpers/v2-server.ts";
import { tokenFor, v2Request } from "../helpers/v2-client.ts";
import { imageVersion } from "../../src/web/document-paths.ts";
import { IMAGE_EXTENSION } from "../../src/domain/page-images.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Replacing a document's file, keeping its address (issue 26 item 5, issue 28 item 3): one rule
 * (src/domain/document-replacement.ts) through v1's upload endpoint, v2 and the app. Readers keep
 * the old pages while the new file converts (the worker is stopped to hold that moment), then the
 * same address shows the new ones; embeds, bookmarks and the documentId stay. Hostile input changes
 * nothing and leaves nothing behind.
 */

const pgSkip = await postgresUnavailable();
const ONE_PAGE = numberedPagesPdf(1);
const THREE_PAGES = numberedPagesPdf(3);
const FIVE_PAGES = numberedPagesPdf(5);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function v1(server: TestServer, action: string, params: Record<string, string> = {}): Promise<any> {
  const r = await call(callerOf(server), action, params);
  const body = JSON.parse(r.body) as { rsp: { stat: string; _content: unknown } };
  assert.equal(body.rsp.stat, "ok", r.body);
  return body.rsp._content;
}

/** `svc.document.update` sent to the upload endpoint with a file part. */
function updateWithFile(server: TestServer, account: { apiKey: string; apiSecret: string }, params: Record<string, string>, file: Buffer, fileName = "new.pdf") {
  return postMultipart(`${server.uploadUrl}/1_0`, [
    ...fields(signedUpload(account, { action: "svc.document.update", format: "json", ...params })),
    fileField(file, fileName),
  ]);
}

async function uploadPdf(server: TestServer, pdf: Buffer, extra: Record<string, string> = {}): Promise<string> {
  const r = await postMultipart(`${server.uploadUrl}/1_0`, [...fields(signedUpload(server.account, { format: "json", ...extra })), fileField(pdf, "first.pdf")]);
  const rsp = parseRsp(r, "json");
  assert.equal(rsp.stat, "ok", r.text);
  return String(rsp.document!.documentId);
}

const blobFolders = async (server: TestServer) =>
  new Set((await server.listBlobFiles()).filter((f) => f.startsWith("documents/")).map((f) => f.split("/")[1]!));

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`replacing a document's file on ${dialect}`, { skip: dialect === "postgres" ? pgSkip : undefined }, () => {
    let server: TestServer;
    let worker: TestWorker | undefined;
    const startWorker = async () => {
      worker ??= await startTestWorker(server, { startOffice: false, maxAttempts: 1 });
    };
    const stopWorker = async () => {
      await worker?.stop();
      worker = undefined;
    };
    const replaced = (documentId: string) =>
      until(async () => (await server.services.store.replacements.get(documentId))?.state !== "P", 60_000, "the replacement to end");

    before(async () => {
      server = await startServerOn(dialect, TEST_APP_ENV);
      await givePassword(server, "tester");
    });
    after(async () => {
      await stopWorker();
      await server.close();
    });

    test("v1: readers keep the old pages while the new file converts, then the same address shows the new ones; embeds and folders stay", async () => {
      await startWorker();
      const folder = await v1(server, "folder.add", { folderName: "Manuals" });
      const folderId = folder.folder.folderId as string;
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "manual", folderIds: folderId });
      const first = await settled(server, documentId, 60_000);
      assert.equal(first.state, "A");
      assert.equal(first.pageCount, 1);
      const embed = await v1(server, "document_embed.add", { documentId, readerStartPage: "1", width: "400", height: "300" });
      const embedId = String(embed.documentEmbed.id);
      await stopWorker();
      // Subscribers hear of the new pages as of the first ones (delivered or not: the delivery is written with the switch).
      await v1(server, "webhook.set", { url: "https://hooks.example.com/quire", events: "document.active" });

      const r = await updateWithFile(server, server.account, { name: "manual", title: "Manual, 2nd edition" }, THREE_PAGES, "second.pdf");
      const rsp = JSON.parse(r.text).rsp;
      assert.equal(rsp.stat, "ok", r.text);
      assert.equal(rsp._content.document.state, "A", "still published");
      assert.equal(rsp._content.document.pageCount, 1, "the old pages meanwhile");
      assert.equal(rsp._content.document.title, "Manual, 2nd edition", "the update's other fields are written");
      assert.equal(rsp._content.document.replacementState, "P");

      // Meanwhile: the reader, its page images and the embed answer the old pages.
      const during = await fetch(`${server.url}/tester/docs/manual`);
      assert.equal(during.status, 200);
      const duringHtml = await during.text();
      assert.match(duringHtml, /data-pages="1"/);
      assert.ok(duringHtml.includes(`v=${imageVersion(first)}`));
      assert.equal((await fetch(`${server.url}/tester/docs/manual/pages/read/1.${IMAGE_EXTENSION}?v=${imageVersion(first)}`)).status, 200);
      assert.equal((await fetch(`${server.url}/tester/docs/manual/embed`)).status, 200);

      await startWorker();
      await replaced(documentId);
      const after = await server.services.store.documents.getById(first.accountId, documentId);
      assert.equal(after!.state, "A");
      assert.equal(after!.pageCount, 3);
      assert.equal(after!.name, "manual", "the address stays");
      assert.equal(after!.orgDocName, "second.pdf");
      assert.notEqual(after!.blobId, first.blobId);
      assert.equal(await server.services.store.replacements.get(documentId), undefined);
      await until(async () => !(await blobFolders(server)).has(first.blobId), 10_000, "the old pages to be removed");

      const reader = await (await fetch(`${server.url}/tester/docs/manual`)).text();
      assert.match(reader, /data-pages="3"/);
      const version = imageVersion(after!);
      assert.notEqual(version, imageVersion(first), "a new version: no cache keeps the old images under the new URLs");
      assert.ok(reader.includes(`v=${version}`));
      const image = await fetch(`${server.url}/tester/docs/manual/pages/read/3.${IMAGE_EXTENSION}?v=${version}`);
      assert.equal(image.status, 200);
      assert.match(image.headers.get("cache-control")!, /immutable/);
      // An old URL is no longer kept for good: it revalidates against the new pages.
      const stale = await fetch(`${server.url}/tester/docs/manual/pages/read/1.${IMAGE_EXTENSION}?v=${imageVersion(first)}`);
      assert.doesNotMatch(stale.headers.get("cache-control")!, /immutable/);
      assert.notEqual(stale.headers.get("etag"), image.headers.get("etag"));

      const embeds = await v1(server, "document_embeds.list", { documentId });
      assert.ok(JSON.stringify(embeds).includes(embedId), "the embed stays");
      const embedPage = await fetch(`${server.url}/tester/docs/manual/embed`);
      assert.equal(embedPage.status, 200);
      assert.match(await embedPage.text(), /data-pages="3"/);
      const bookmarks = await v1(server, "bookmarks.list", { folderId });
      assert.ok(JSON.stringify(bookmarks).includes(documentId), "still in its folder");
      const deliveries = await dbOf(server.services.store).selectFrom("webhookDeliveries").select(["event", "body"]).where("documentId", "=", documentId).execute();
      assert.equal(deliveries.length, 1);
      assert.equal(deliveries[0]!.event, "document.active");
      assert.match(deliveries[0]!.body, /"pageCount":3/);
      await v1(server, "webhook.delete");
      const found = await v1(server, "documents.search", { q: "page 3 book" });
      assert.ok(JSON.stringify(found).includes(documentId), "the new text is searchable");
    });

    test("newest wins: a second replacement while one converts discards the first", async () => {
      await startWorker();
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "twice" });
      const first = await settled(server, documentId, 60_000);
      await stopWorker();
      const a = JSON.parse((await updateWithFile(server, server.account, { name: "twice" }, THREE_PAGES, "a.pdf")).text).rsp;
      assert.equal(a.stat, "ok");
      const older = await server.services.store.replacements.get(documentId);
      const b = JSON.parse((await updateWithFile(server, server.account, { name: "twice" }, FIVE_PAGES, "b.pdf")).text).rsp;
      assert.equal(b.stat, "ok");
      const newer = await server.services.store.replacements.get(documentId);
      assert.notEqual(newer!.jobId, older!.jobId);
      // The older job, had it been running, finds its result refused at the switch.
      const refused = await server.services.store.replacements.switchTo(documentId, older!.jobId, {
        orgDocType: "pdf", originalSize: 1, pageCount: 3, coverWidth: 1, coverHeight: 1, description: undefined, pageTexts: ["", "", ""],
      }, Date.now());
      assert.deepEqual(refused, { ok: false, reason: "superseded" });
      assert.ok(!(await blobFolders(server)).has(older!.blobId), "the superseded file is removed");
      await startWorker();
      await replaced(documentId);
      const after = await server.services.store.documents.getById(first.accountId, documentId);
      assert.equal(after!.pageCount, 5);
      assert.equal(after!.orgDocName, "b.pdf");
    });

    test("a replacement whose job is lost (failed unclaimed, as an unknown kind is) is failed by the sweeper, its files removed", async () => {
      await startWorker();
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "lost-job" });
      const first = await settled(server, documentId, 60_000);
      await stopWorker();
      assert.equal(JSON.parse((await updateWithFile(server, server.account, { name: "lost-job" }, THREE_PAGES)).text).rsp.stat, "ok");
      const r = await server.services.store.replacements.get(documentId);
      await dbOf(server.services.store).updateTable("jobs").set({ state: "failed" }).where("id", "=", r!.jobId).execute();
      const report = await sweep({ store: server.services.store, blobs: server.services.blobs, log: pino({ level: "silent" }), jobKind: "convert-document", maxProcessingMs: 3_600_000 });
      assert.equal(report.failed, 1);
      const failed = await server.services.store.replacements.get(documentId);
      assert.equal(failed!.state, "F");
      assert.equal(failed!.errorCode, 9);
      assert.ok(!(await blobFolders(server)).has(r!.blobId));
      assert.equal((await server.services.store.documents.getById(first.accountId, documentId))!.blobId, first.blobId);
    });

    test("a new file that fails to convert: the old pages stay, and v1, v2 and the app say why", async () => {
      await startWorker();
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "broken-next" });
      const first = await settled(server, documentId, 60_000);
      const corrupt = await readFile(join(FIXTURES, "bad/pdf-truncated-half.pdf"));
      const r = JSON.parse((await updateWithFile(server, server.account, { name: "broken-next" }, corrupt, "cut.pdf")).text).rsp;
      assert.equal(r.stat, "ok", JSON.stringify(r));
      await replaced(documentId);
      const failed = await server.services.store.replacements.get(documentId);
      assert.equal(failed!.state, "F");
      assert.ok(failed!.errorCode > 0);
      assert.ok(failed!.errorMessage.length > 0);
      const doc = await server.services.store.documents.getById(first.accountId, documentId);
      assert.equal(doc!.state, "A");
      assert.equal(doc!.blobId, first.blobId, "the old pages stay");
      assert.equal((await fetch(`${server.url}/tester/docs/broken-next/pages/read/1.${IMAGE_EXTENSION}`)).status, 200);
      await until(async () => !(await blobFolders(server)).has(failed!.blobId), 10_000, "nothing of the failed file to be kept");

      const token = await tokenFor(server);
      const v2 = await v2Request(server, "GET", `publications/${documentId}`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(v2.json.fileInfo.conversionStatus, "FAILED");
      assert.equal(v2.json.fileInfo.failureReason, failed!.errorMessage);
      assert.equal(v2.json.state, "PUBLISHED");

      const app = new AppClient(server.url);
      await app.signIn("tester");
      const page = await app.get(`/app/documents/${documentId}`);
      assert.ok(page.body.includes(`Replacement failed: ${failed!.errorMessage.replace(/'/g, "&#39;")}`) || page.body.includes("Replacement failed:"), "the app says so");
    });

    test("hostile input: an empty file, a file of no format, a document converting, another account's document, half a request", async () => {
      await startWorker();
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "kept" });
      const first = await settled(server, documentId, 60_000);
      const folders = await blobFolders(server);
      const refusal = async (file: Buffer, params: Record<string, string>, account = server.account) => {
        const rsp = JSON.parse((await updateWithFile(server, account, params, file)).text).rsp;
        assert.equal(rsp.stat, "fail");
        return `${rsp._content.error.code}/${rsp._content.error.field ?? "-"}`;
      };
      assert.equal(await refusal(Buffer.alloc(0), { name: "kept" }), "201/file", "empty");
      assert.equal(await refusal(Buffer.from("just some bytes \x00\x01\x02 that are no document"), { name: "kept" }), "201/file", "no format");
      const other = await createAccount(server.services.store, `other${dialect.slice(0, 2)}`);
      assert.equal(await refusal(ONE_PAGE, { name: documentId }, other), "300/-", "another account's document");
      assert.equal(await refusal(ONE_PAGE, { name: "kept", language: "xx" }), "201/language", "a bad parameter is refused first");

      // Half a request: the client goes away in the middle of the file.
      const boundary = newBoundary();
      const body = multipartBody(boundary, [...fields(signedUpload(server.account, { action: "svc.document.update", name: "kept" })), fileField(THREE_PAGES, "half.pdf")]);
      // A client that leaves 200 bytes before the end of its file.
      const leave = new AbortController();
      async function* half() {
        yield body.subarray(0, body.length - 200);
        await sleep(50);
        leave.abort();
      }
      const target = new URL(server.uploadUrl);
      await rawHttp(target.origin, {
        method: "POST",
        path: `${target.pathname}/1_0`,
        headers: [["Content-Type", `multipart/form-data; boundary=${boundary}`], ["Content-Length", String(body.length)]],
        body: half(),
        signal: leave.signal,
      }).then(
        (res) => assert.fail(`an answer to half a body: ${res.status} ${res.body}`),
        () => undefined,
      );

      const token = await tokenFor(server);
      const foreign = await v2Request(server, "PATCH", `drafts/${documentId}/upload`, { headers: { Authorization: `Bearer ${await tokenFor(server, other.username)}` }, body: formWith(ONE_PAGE) });
      assert.equal(foreign.status, 404, "v2: another account's slug");
      const empty = await v2Request(server, "PATCH", `drafts/${documentId}/upload`, { headers: { Authorization: `Bearer ${token}` }, body: formWith(Buffer.alloc(0)) });
      assert.equal(empty.status, 400);

      // Converting for the first time: refused (307), nothing written.
      await stopWorker();
      const converting = await uploadPdf(server, ONE_PAGE, { name: "still-converting" });
      assert.equal(await refusal(ONE_PAGE, { name: converting }), "307/-");

      assert.equal(await server.services.store.replacements.get(documentId), undefined, "no replacement was started");
      const doc = await server.services.store.documents.getById(first.accountId, documentId);
      assert.equal(doc!.blobId, first.blobId);
      assert.equal(doc!.pageCount, 1);
      const now = await blobFolders(server);
      const added = [...now].filter((f) => !folders.has(f));
      const convertingDoc = await server.services.store.documents.getById(first.accountId, converting);
      assert.deepEqual(added.filter((f) => f !== convertingDoc!.blobId), [], "nothing left behind");
      await startWorker();
      await settled(server, converting, 60_000);
    });

    test("deleted while its new file converts: nothing comes back", async () => {
      await startWorker();
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "goes-away" });
      const first = await settled(server, documentId, 60_000);
      await stopWorker();
      assert.equal(JSON.parse((await updateWithFile(server, server.account, { name: "goes-away" }, THREE_PAGES)).text).rsp.stat, "ok");
      const replacement = await server.services.store.replacements.get(documentId);
      await v1(server, "document.delete", { names: "goes-away" });
      await startWorker();
      await until(async () => (await server.services.store.jobs.getForDocument(documentId)).length === 0, 30_000, "no job left");
      assert.equal(await server.services.store.documents.getById(first.accountId, documentId), undefined);
      const folders = await blobFolders(server);
      await until(async () => !(await blobFolders(server)).has(first.blobId), 10_000, "the document's files to go");
      assert.ok(!folders.has(replacement!.blobId), "the new file's folder went with it");
    });

    test("a failed document takes a new file and converts again at the same address", async () => {
      await startWorker();
      const corrupt = await readFile(join(FIXTURES, "bad/pdf-truncated-half.pdf"));
      const documentId = await uploadPdf(server, corrupt, { name: "second-try" });
      assert.equal((await settled(server, documentId, 60_000)).state, "F");
      const r = JSON.parse((await updateWithFile(server, server.account, { name: "second-try" }, THREE_PAGES)).text).rsp;
      assert.equal(r.stat, "ok", JSON.stringify(r));
      assert.equal(r._content.document.state, "P");
      const doc = await settled(server, documentId, 60_000);
      assert.equal(doc.state, "A");
      assert.equal(doc.pageCount, 3);
      assert.equal(doc.name, "second-try");
    });

    test("v2: a published document's new file by upload and by fileUrl replaces its pages once converted", async () => {
      await startWorker();
      const token = await tokenFor(server);
      const auth = { Authorization: `Bearer ${token}` };
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "v2-file" });
      const first = await settled(server, documentId, 60_000);
      await stopWorker();
      const up = await v2Request(server, "PATCH", `drafts/${documentId}/upload`, { headers: auth, body: formWith(THREE_PAGES, "blob") });
      assert.equal(up.status, 200, up.text);
      assert.equal(up.json.fileInfo.conversionStatus, "CONVERTING");
      assert.equal(up.json.state, "PUBLISHED");
      assert.equal(up.json.fileInfo.pageCount, 1, "the pages readers see meanwhile");
      await startWorker();
      await replaced(documentId);
      const done = await v2Request(server, "GET", `publications/${documentId}`, { headers: auth });
      assert.equal(done.json.fileInfo.conversionStatus, "DONE");
      assert.equal(done.json.fileInfo.pageCount, 3);
      assert.match(done.json.publicLocation, /\/tester\/docs\/v2-file$/);

      const host = await fixtureHost();
      try {
        // The fixture host is on 127.0.0.1: only a worker that allows private addresses may fetch it,
        // so none other runs while the fetch is queued (one could take it first and fail it).
        await stopWorker();
        const byUrl = await v2Request(server, "PATCH", `drafts/${documentId}`, {
          headers: { ...auth, "Content-Type": "application/json" },
          body: JSON.stringify({ fileUrl: `${host.url}/pdf-quartz-firefox-1page.pdf` }),
        });
        assert.equal(byUrl.status, 200, byUrl.text);
        assert.equal(byUrl.json.fileInfo.conversionStatus, "CONVERTING");
        worker = await startTestWorker(server, { startOffice: false, maxAttempts: 1, allowPrivate: true });
        await replaced(documentId);
        const after = await server.services.store.documents.getById(first.accountId, documentId);
        assert.equal(after!.pageCount, 1);
        assert.equal(after!.origin, "apislurp");
        assert.equal(await server.services.store.replacements.get(documentId), undefined);
      } finally {
        await host.close();
      }
    });

    test("the app: the edit page's Replace file form, with its CSRF token", async () => {
      await startWorker();
      const documentId = await uploadPdf(server, ONE_PAGE, { name: "from-app" });
      const first = await settled(server, documentId, 60_000);
      await stopWorker();
      const app = new AppClient(server.url);
      await app.signIn("tester");
      const page = await app.get(`/app/documents/${documentId}`);
      assert.match(page.body, /<legend>Replace file<\/legend>/);
      const action = /action="([^"]*\/replace\?_csrf=[^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, "&");
      assert.ok(action, "the form posts to the replace route with its token");
      const send = (path: string, file: Buffer) => {
        const boundary = newBoundary();
        return fetch(`${server.url}${path}`, {
          method: "POST",
          redirect: "manual",
          headers: { cookie: app.cookieHeader(), "content-type": `multipart/form-data; boundary=${boundary}` },
          body: new Uint8Array(multipartBody(boundary, [fileField(file, "app.pdf")])),
        });
      };
      assert.equal((await send(`/app/documents/${documentId}/replace`, THREE_PAGES)).status, 403, "no token, no change");
      const bad = await send(action, Buffer.alloc(0));
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /not in a format Quire can publish/);
      const ok = await send(action, THREE_PAGES);
      assert.equal(ok.status, 303);
      const shown = await app.get(ok.headers.get("location")!.replace(server.url, ""));
      assert.match(shown.body, /Readers see the current pages until the new ones are ready/);
      assert.match(shown.body, /data-replacement-state="P"/);
      // Another account's publisher, with a valid token of its own session, finds no such document.
      const otherName = `app${dialect.slice(0, 2)}`;
      await createAccount(server.services.store, otherName);
      await givePassword(server, otherName);
      const intruder = new AppClient(server.url);
      await intruder.signIn(otherName);
      await intruder.get("/app/documents");
      const boundary = newBoundary();
      const foreign = await fetch(`${server.url}/app/documents/${documentId}/replace?_csrf=${encodeURIComponent(intruder.csrf)}`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: intruder.cookieHeader(), "content-type": `multipart/form-data; boundary=${boundary}` },
        body: new Uint8Array(multipartBody(boundary, [fileField(FIVE_PAGES, "theirs.pdf")])),
      });
      assert.equal(foreign.status, 404, "another account's document");

      await startWorker();
      await replaced(documentId);
      const after = await server.services.store.documents.getById(first.accountId, documentId);
      assert.equal(after!.pageCount, 3);
      assert.equal(after!.orgDocName, "app.pdf");
    });
  });
}

function formWith(file: Buffer, name = "file.pdf"): FormData {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(file)], { type: "application/pdf" }), name);
  return form;
}

describe("a new file over the upload limit", () => {
  let server: TestServer;
  before(async () => {
    server = await startServerOn("sqlite", { QUIRE_MAX_UPLOAD_BYTES: "4000" });
  });
  after(() => server.close());

  test("is 205 on file (a malformed parameter before it wins), through v1 and v2, and nothing is kept", async () => {
    const documentId = await uploadPdf(server, ONE_PAGE, { name: "small" });
    const big = Buffer.concat([THREE_PAGES, Buffer.alloc(8000, 32)]);
    const before = await server.listBlobFiles();
    const over = JSON.parse((await updateWithFile(server, server.account, { name: "small" }, big)).text).rsp;
    assert.equal(`${over._content.error.code}/${over._content.error.field}`, "205/file");
    const malformed = JSON.parse((await updateWithFile(server, server.account, { name: "small", language: "xx" }, big)).text).rsp;
    assert.equal(`${malformed._content.error.code}/${malformed._content.error.field}`, "201/language");
    const token = await tokenFor(server);
    const v2 = await v2Request(server, "PATCH", `drafts/${documentId}/upload`, { headers: { Authorization: `Bearer ${token}` }, body: formWith(big) });
    assert.equal(v2.status, 413);
    assert.equal(await server.services.store.replacements.get(documentId), undefined);
    await until(async () => (await server.listBlobFiles()).length === before.length, 5_000, "the spool to be removed");
    assert.deepEqual(await server.listBlobFiles(), before);
  });
});
