import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { utcDay } from "../../src/domain/reader-identity.ts";
import { assertError, FORMATS, okRsp, parseXml } from "../helpers/api-answers.ts";
import { call, callerOf, type Caller } from "../helpers/api-client.ts";
import { accountIdOf, otherCaller, seedDoc } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** `svc.documents.stats` (decisions §15) in the v1 envelope: the account's or one document's figures, over a period. */
describe("svc.documents.stats", () => {
  let server: TestServer;
  let me: Caller;
  let them: Caller & { accountId: number };
  let mine: DocumentRecord;
  let other: DocumentRecord;
  let theirs: DocumentRecord;
  const now = Date.now();
  const today = utcDay(now);
  const yesterday = utcDay(now - 86_400_000);

  before(async () => {
    server = await startTestServer({ QUIRE_RATE_PER_SECOND: "0" });
    me = callerOf(server);
    const accountId = await accountIdOf(server, me);
    them = await otherCaller(server, "someone");
    mine = await seedDoc(server, { accountId, username: "tester" }, { state: "A", pageCount: 3, name: "annual-report" });
    other = await seedDoc(server, { accountId, username: "tester" }, { state: "A", pageCount: 1, name: "other-one" });
    theirs = await seedDoc(server, { accountId: them.accountId, username: "someone" }, { state: "A", pageCount: 2, name: "their-doc" });
    const view = (documentId: string, readerKey: string, at: number, embedded = false, referrerHost = "") =>
      ({ kind: "view", documentId, readerKey, addressKey: `a-${readerKey}`, at, embedded, referrerHost, startPage: 1 }) as const;
    await server.services.store.statistics.record([
      view(mine.documentId, "r1", now - 86_400_000),
      view(mine.documentId, "r2", now, true, "blog.example"),
      { kind: "beacon", documentId: mine.documentId, readerKey: "r2", at: now + 15_000, report: { page: 3, seconds: 12, turned: true, shares: 1, clicks: 0 } },
      view(other.documentId, "r3", now),
      view(theirs.documentId, "r4", now),
      { kind: "impressions", documentId: mine.documentId, at: now, count: 1 },
    ]);
  });
  after(async () => server?.close());

  test("the account's figures this month, in both formats", async () => {
    for (const format of FORMATS) {
      const res = await call(me, "documents.stats", { from: yesterday, to: today }, format);
      const rsp = okRsp(res, format);
      if (format === "json") {
        const stats = (rsp._content as { stats: Record<string, unknown> }).stats;
        assert.equal(stats.documentId, "");
        assert.equal(stats.views, 3);
        assert.equal(stats.reads, 1);
        assert.equal(stats.embeddedViews, 1);
        assert.equal(stats.impressions, 1);
        assert.equal(stats.shares, 1);
        assert.equal(stats.averageTimeSpent, 12);
        assert.deepEqual((stats.days as Array<{ date: string }>).map((d) => d.date), [yesterday, today].filter((d, i, a) => a.indexOf(d) === i));
        assert.deepEqual(stats.referrers, [{ host: "", embedded: false, views: 2 }, { host: "blog.example", embedded: true, views: 1 }]);
        assert.deepEqual(stats.pages, []);
      } else {
        const stats = (parseXml(res.body).rsp as { stats: Record<string, unknown> }).stats;
        assert.equal(stats.views, "3");
        assert.ok(stats.days && stats.referrers);
      }
    }
  });

  test("one document by documentId or by name, with its depth curve; never another account's", async () => {
    for (const params of [{ documentId: mine.documentId }, { name: "annual-report" }] as Array<Record<string, string>>) {
      const res = await call(me, "documents.stats", { ...params, dateRange: "maxTime" }, "json");
      const stats = (okRsp(res, "json")._content as { stats: Record<string, unknown> }).stats;
      assert.equal(stats.documentId, mine.documentId);
      assert.equal(stats.views, 2);
      assert.deepEqual(stats.pages, [
        { page: 1, readers: 2, share: 1 }, { page: 2, readers: 1, share: 0.5 }, { page: 3, readers: 1, share: 0.5 },
      ]);
    }
    for (const format of FORMATS) {
      assertError(await call(me, "documents.stats", { documentId: theirs.documentId }, format), format, "300");
      assertError(await call(me, "documents.stats", { name: "their-doc" }, format), format, "300");
      assertError(await call(me, "documents.stats", { name: "no-such-doc" }, format), format, "300");
    }
    const theirView = (okRsp(await call(them, "documents.stats", { dateRange: "maxTime" }, "json"), "json")._content as { stats: Record<string, unknown> }).stats;
    assert.equal(theirView.views, 1, "each account sees its own");
  });

  test("periods: thisMonth by default, lastMonth, from/to; malformed values are 201 on the parameter", async () => {
    const last = (okRsp(await call(me, "documents.stats", { dateRange: "lastMonth" }, "json"), "json")._content as { stats: Record<string, unknown> }).stats;
    assert.ok((last.to as string) < today.slice(0, 8) + "01");
    const none = (okRsp(await call(me, "documents.stats", { from: "2020-01-01", to: "2020-01-31" }, "json"), "json")._content as { stats: Record<string, unknown> }).stats;
    assert.equal(none.views, 0);
    assert.deepEqual(none.days, []);
    const cases: Array<[Record<string, string>, string]> = [
      [{ dateRange: "lastYear" }, "dateRange"],
      [{ dateRange: "thisMonth", from: "2026-01-01" }, "dateRange"],
      [{ from: "2026-02-30" }, "from"],
      [{ from: "yesterday" }, "from"],
      [{ to: "2026-13-01" }, "to"],
      [{ from: "2026-05-02", to: "2026-05-01" }, "to"],
      [{ documentId: "../../etc" }, "documentId"],
      [{ documentId: mine.documentId, name: "annual-report" }, "name"],
      [{ name: "a/b" }, "name"],
    ];
    for (const format of FORMATS) {
      for (const [params, field] of cases) assertError(await call(me, "documents.stats", params, format), format, "201", field);
    }
  });
});
