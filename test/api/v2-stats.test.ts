import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import { namedRange, type BeaconReport } from "../../src/domain/statistics.ts";
import { postgresUnavailable } from "../helpers/dialects.ts";
import type { TestServer } from "../helpers/test-server.ts";
import { sdk, tokenFor } from "../helpers/v2-client.ts";
import { startServerOn } from "../helpers/v2-server.ts";

/** `GET /v2/stats` answers the readership the statistics store counted (decisions §15), as v1's report does. */

const pgSkip = await postgresUnavailable();
const beacon = (r: Partial<BeaconReport>): BeaconReport => ({ page: 1, seconds: 0, turned: false, shares: 0, clicks: 0, ...r });

async function publishedDoc(server: TestServer, accountId: number, username: string, i: number): Promise<string> {
  const now = Date.now();
  const doc = buildNewDocument(
    newDocumentIds(now + i),
    { accountId, username, origin: "apiupload", orgDocType: "pdf", orgDocName: `s${i}.pdf`, defaultTitle: `S ${i}`, slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    { name: `s-${i}`, title: undefined, tags: [], commentsAllowed: true, description: "", downloadable: true, infoLink: "", language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [] },
    now,
  );
  await server.services.store.documents.insertWithJob(doc, "convert-document");
  await server.services.store.documents.markActive(doc.documentId, { pageCount: 3, coverWidth: 600, coverHeight: 800, description: undefined, name: undefined }, now);
  return doc.documentId;
}

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`GET /v2/stats on ${dialect}`, { skip: dialect === "postgres" ? pgSkip : undefined }, () => {
    let server: TestServer;
    before(async () => (server = await startServerOn(dialect)));
    after(() => server.close());

    test("the account's and one publication's figures, by dateRange; another account's slug is 404", async () => {
      const store = server.services.store;
      const accountId = (await store.accounts.signInRecord("tester"))!.id;
      const a = await publishedDoc(server, accountId, "tester", 1);
      const b = await publishedDoc(server, accountId, "tester", 2);
      const now = Date.now();
      const view = (documentId: string, readerKey: string) => ({ kind: "view" as const, documentId, readerKey, addressKey: `addr-${readerKey}`, at: now, embedded: false, referrerHost: "", startPage: 1 });
      await store.statistics.record([
        view(a, "r1"), view(a, "r2"), view(b, "r3"),
        { kind: "impressions", documentId: a, at: now, count: 3 },
        { kind: "impressions", documentId: b, at: now, count: 2 },
        { kind: "download", documentId: a, readerKey: "r1", addressKey: "addr-r1", at: now },
      ]);
      await store.statistics.record([
        { kind: "beacon", documentId: a, readerKey: "r1", at: now, report: beacon({ page: 2, turned: true, seconds: 30, shares: 1, clicks: 2 }) },
        { kind: "beacon", documentId: b, readerKey: "r3", at: now, report: beacon({ page: 2, turned: true, seconds: 10 }) },
      ]);
      const c = sdk(server, await tokenFor(server));
      const all = await c.get("stats");
      assert.equal(all.status, 200, all.text);
      const v1 = (await store.statistics.report({ accountId, range: namedRange("maxTime", Date.now()) })).totals;
      assert.deepEqual(all.json, {
        averageTimeSpent: v1.averageTimeSpent, clicks: v1.clicks, impressions: v1.impressions, reads: v1.reads, downloads: v1.downloads, shares: v1.shares,
      });
      assert.equal(all.json.impressions, 5);
      assert.equal(all.json.reads, 2);
      assert.equal(all.json.downloads, 1);
      assert.equal(all.json.shares, 1);
      assert.equal(all.json.clicks, 2);
      const one = (await c.get(`stats?dateRange=maxTime&slug=${a}`)).json;
      assert.equal(one.impressions, 3);
      assert.equal(one.reads, 1);
      const oneV1 = (await store.statistics.report({ accountId, documentId: a, range: namedRange("maxTime", Date.now()) })).totals;
      assert.equal(one.averageTimeSpent, oneV1.averageTimeSpent, "the report's own figure, in seconds");
      const thisMonth = (await c.get("stats?dateRange=thisMonth")).json;
      assert.equal(thisMonth.impressions, 5);
      const bad = await c.get("stats?dateRange=yesterday");
      assert.equal(bad.status, 400);
      assert.match(bad.json.message, /dateRange/);
      await createAccount(store, "other");
      assert.equal((await sdk(server, await tokenFor(server, "other")).get(`stats?slug=${a}`)).status, 404);
      assert.equal((await sdk(server, await tokenFor(server, "other")).get("stats")).json.impressions, 0);
    });
  });
}
