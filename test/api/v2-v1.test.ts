import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { call, callerOf } from "../helpers/api-client.ts";
import { AppClient, givePassword, TEST_APP_ENV } from "../helpers/app-client.ts";
import { postgresUnavailable } from "../helpers/dialects.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { settled, until } from "../helpers/poll.ts";
import type { TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { sdk, tokenFor, v2Request } from "../helpers/v2-client.ts";
import { startServerOn } from "../helpers/v2-server.ts";

/**
 * One document model (decisions §14): a v2 draft is invisible to v1 and the public pages until
 * published, then v1 and the app read and change it; a v1 upload is a v2 publication whose v2
 * edits wait under `changes` until it is published again; a scheduled publish happens by itself.
 */

const PDF = "pdf-quartz-firefox-1page.pdf";
const pgSkip = await postgresUnavailable();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function v1(server: TestServer, action: string, params: Record<string, string> = {}): Promise<any> {
  const r = await call(callerOf(server), action, params);
  const body = JSON.parse(r.body) as { rsp: { stat: string; _content: unknown } };
  assert.equal(body.rsp.stat, "ok", r.body);
  return body.rsp._content;
}

const v1Names = async (server: TestServer): Promise<string[]> =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ((await v1(server, "documents.list")).result._content as any[]).map((d) => d.document.documentId);

async function uploadTo(server: TestServer, token: string, slug: string): Promise<void> {
  const form = new FormData();
  form.append("file", new Blob([await readFile(join(FIXTURES, PDF))], { type: "application/pdf" }), "one.pdf");
  form.append("confirmCopyright", "true");
  const r = await v2Request(server, "PATCH", `drafts/${slug}/upload`, { headers: { Authorization: `Bearer ${token}` }, body: form });
  assert.equal(r.status, 200, r.text);
}

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`v1 and v2 see the same documents on ${dialect}`, { skip: dialect === "postgres" ? pgSkip : undefined }, () => {
    let server: TestServer;
    let worker: TestWorker;
    let token: string;
    before(async () => {
      server = await startServerOn(dialect, TEST_APP_ENV);
      worker = await startTestWorker(server, { startOffice: false });
      token = await tokenFor(server);
      await givePassword(server, "tester");
    });
    after(async () => {
      await worker.stop();
      await server.close();
    });

    test("a v2 draft is in no v1 list and on no public page; published, v1 and the app read and change it, v2 sees it", async () => {
      const c = sdk(server, token);
      const draft = (await c.post("drafts", { confirmCopyright: true, info: { title: "Field guide", description: "Birds", access: "PUBLIC", downloadable: true } })).json;
      await uploadTo(server, token, draft.slug);
      await settled(server, draft.slug, 60_000);
      assert.equal((await c.get(`drafts/${draft.slug}`)).json.fileInfo.conversionStatus, "DONE");
      assert.ok(!(await v1Names(server)).includes(draft.slug), "not in v1's list");
      assert.equal((await fetch(`${server.url}/tester/docs/${draft.slug}`)).status, 404, "not public");
      const app = new AppClient(server.url);
      assert.equal((await app.signIn("tester")).status, 303);
      assert.ok(!(await app.get("/app/documents")).body.includes("Field guide"), "not in the app's list");

      const published = (await c.post(`drafts/${draft.slug}/publish`, { desiredName: "field-guide" })).json;
      assert.match(published.publicLocation, /\/tester\/docs\/field-guide$/);
      const listed = await v1(server, "documents.list");
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const seen = (listed.result._content as any[]).map((d) => d.document).find((d) => d.documentId === draft.slug);
      assert.ok(seen, "in v1's list once published");
      assert.equal(seen.name, "field-guide");
      assert.equal(seen.state, "A");
      assert.equal(seen.title, "Field guide");
      assert.equal(seen.downloadable, true);
      assert.ok((await app.get("/app/documents")).body.includes("Field guide"), "in the app's list");

      await v1(server, "document.update", { name: "field-guide", title: "Field guide, 2nd edition" });
      assert.equal((await c.get(`publications/${draft.slug}`)).json.title, "Field guide, 2nd edition");
      const page = await app.get(`/app/documents/${draft.slug}`);
      assert.equal(page.status, 200);
      const edited = await app.post(`/app/documents/${draft.slug}`, { title: "Field guide, app edition", description: "Birds", access: "public", downloadable: "true" });
      assert.ok(edited.status < 400, `app edit: ${edited.status}`);
      assert.equal((await c.get(`publications/${draft.slug}`)).json.title, "Field guide, app edition");
      const found = await v1(server, "documents.search", { q: "guide" });
      assert.ok(JSON.stringify(found).includes(draft.slug), "searchable once published");
    });

    test("a v1 upload is a v2 publication; v2 edits wait under `changes` until published again, and keep the address", async () => {
      const c = sdk(server, token);
      const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
      const answer = unwrap(await client.upload(join(FIXTURES, PDF), { title: "Price list", description: "Spring" }));
      const documentId = (answer.document as { documentId: string }).documentId;
      const doc = await settled(server, documentId, 60_000);
      assert.equal(doc.state, "A", "published at once, as v1 always did");
      const pub = (await c.get(`publications/${documentId}`)).json;
      assert.equal(pub.state, "PUBLISHED");
      assert.equal(pub.title, "Price list");

      const staged = await c.patch(`drafts/${documentId}`, { info: { title: "Price list (summer)", downloadable: true } });
      assert.equal(staged.status, 200, staged.text);
      assert.equal(staged.json.changes.title, "Price list (summer)");
      assert.equal(staged.json.state, "PUBLISHED");
      const meanwhile = await server.services.store.documents.getById(doc.accountId, documentId);
      assert.equal(meanwhile!.title, "Price list", "v1 and readers keep the published fields");
      assert.equal((await c.get(`publications/${documentId}`)).json.title, "Price list");

      const republished = await c.post(`drafts/${documentId}/publish`, { desiredName: "ignored-on-republish" });
      assert.equal(republished.status, 200, republished.text);
      assert.match(republished.json.publicLocation, new RegExp(`/tester/docs/${meanwhile!.name}$`), "the address stays");
      const after = await server.services.store.documents.getById(doc.accountId, documentId);
      assert.equal(after!.title, "Price list (summer)");
      assert.equal(after!.downloadable, true);
      assert.deepEqual((await c.get(`drafts/${documentId}`)).json.changes, {}, "nothing staged any more");
      // A new file for a published document converts beside its pages (test/api/replace-file.test.ts): the address stays meanwhile.
      const form = new FormData();
      form.append("file", new Blob([await readFile(join(FIXTURES, PDF))]), "new.pdf");
      const replacing = await v2Request(server, "PATCH", `drafts/${documentId}/upload`, { headers: { Authorization: `Bearer ${token}` }, body: form });
      assert.equal(replacing.status, 200, replacing.text);
      assert.equal(replacing.json.state, "PUBLISHED");
      assert.match((await c.get(`publications/${documentId}`)).json.publicLocation, new RegExp(`/tester/docs/${meanwhile!.name}$`));
    });

    test("a scheduled publish: answers the address it will have, SCHEDULED, listed so, then published by the worker's durable job", async () => {
      const c = sdk(server, token);
      const at = new Date(Date.now() + 2_000).toISOString();
      const draft = (await c.post("drafts", { confirmCopyright: true, info: { title: "Timed", access: "PUBLIC", scheduledTime: at } })).json;
      await uploadTo(server, token, draft.slug);
      await settled(server, draft.slug, 60_000);
      const r = await c.post(`drafts/${draft.slug}/publish`, { desiredName: "timed" });
      assert.equal(r.status, 200, r.text);
      const now = (await c.get(`drafts/${draft.slug}`)).json;
      // Unless the machine was so slow that the time has come already.
      if (now.state === "SCHEDULED") {
        assert.equal(now.changes.scheduledTime, at.replace(/\.\d{3}Z$/, (m) => m));
        const scheduled = (await c.get("publications?state=SCHEDULED")).json;
        assert.ok(scheduled.results.some((p: { slug: string }) => p.slug === draft.slug));
      }
      await until(async () => (await c.get(`drafts/${draft.slug}`)).json.state === "PUBLISHED", 60_000, "the scheduled publish");
      const pub = (await c.get(`publications/${draft.slug}`)).json;
      assert.match(pub.publicLocation, /\/tester\/docs\/timed$/);
      // Clients keep the publish answer's address (the TS SDK returns it): it is the one the document gets, not its documentId.
      assert.equal(r.json.publicLocation, pub.publicLocation);
      assert.ok((await v1Names(server)).includes(draft.slug));
    });
  });
}
