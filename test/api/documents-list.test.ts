import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { call, type Caller, callerOf, getNormal, list, refused, sign } from "../helpers/api-client.ts";
import { assertError, FORMATS, readList } from "../helpers/api-answers.ts";
import { accountIdOf, otherCaller, seedDoc } from "../helpers/api-seed.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/** `svc.documents.list` (decisions §8) against a real server, answers read in XML and JSON. */

let server: TestServer;
let c: Caller;
let other: Caller & { accountId: number };
let empty: Caller & { accountId: number };
const mine: DocumentRecord[] = [];
const theirs: DocumentRecord[] = [];

const T0 = Date.UTC(2020, 0, 1);
const TITLES = ["beta", "Alpha", "alpha", "beta", "Émile", "zeta", "alpha", "Beta", "beta", "delta", "Alpha", "zeta"];
const STATES = ["A", "A", "P", "F", "A", "P", "A", "A", "F", "A", "P", "A"] as const;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
  const owner = { accountId: await accountIdOf(server, c), username: "tester" };
  other = await otherCaller(server, "other");
  empty = await otherCaller(server, "nobody");
  for (let i = 0; i < 12; i++) {
    mine.push(
      await seedDoc(server, owner, {
        name: `doc-${String(i).padStart(2, "0")}`,
        nameGiven: true,
        title: TITLES[i]!,
        description: ["", "first", "second", "first"][i % 4]!,
        pageCount: [0, 3, 3, 7][i % 4]!,
        publishDate: T0 + [5, 1, 5, 3, 1, 5, 2, 2, 3, 5, 1, 4][i]! * 86_400_000,
        updatedAt: T0 + [2, 2, 1, 1, 3, 2, 1, 3, 2, 2, 1, 1][i]! * 1000,
        state: STATES[i]!,
        access: i % 3 === 0 ? "private" : "public",
        origin: i % 2 === 0 ? "apiupload" : "apislurp",
        orgDocType: (["pdf", "odt", "unknown", "ppt"] as const)[i % 4]!,
        orgDocName: i % 5 === 0 ? "report.pdf" : `file-${i}.pdf`,
      }),
    );
  }
  for (let i = 0; i < 3; i++) {
    theirs.push(await seedDoc(server, { accountId: other.accountId, username: "other" }, { name: `doc-0${i}`, title: "alpha", orgDocName: "report.pdf" }));
  }
});
after(() => server.close());

/** Code point order, as the store sorts text on both dialects. */
const cmpText = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const SORT_VALUE: Record<string, (d: DocumentRecord) => string | number> = {
  publishDate: (d) => d.publishDate,
  title: (d) => d.title,
  name: (d) => d.name,
  documentId: (d) => d.documentId,
  description: (d) => d.description,
  pageCount: (d) => d.pageCount,
  ep: (d) => Math.floor(d.updatedAt / 1000),
};

function expectedOrder(docs: DocumentRecord[], sortBy: string, order: "asc" | "desc"): string[] {
  const value = SORT_VALUE[sortBy]!;
  const sign = order === "asc" ? 1 : -1;
  return [...docs]
    .sort((a, b) => {
      const va = value(a), vb = value(b);
      const primary = typeof va === "number" ? va - (vb as number) : cmpText(va, vb as string);
      return sign * (primary !== 0 ? primary : cmpText(a.documentId, b.documentId));
    })
    .map((d) => d.documentId);
}

const ids = (docs: Array<Record<string, unknown>>) => docs.map((d) => d.documentId as string);

describe("answer shape", () => {
  for (const format of FORMATS) {
    test(`${format}: an account with no documents answers an empty result`, async () => {
      const res = await call(empty, "documents.list", {}, format);
      const r = readList(res, format);
      assert.deepEqual(r, { totalCount: 0, startIndex: 0, pageSize: 10, more: false, docs: [] });
      if (format === "json") assert.match(res.body, /"_content":\[\]/);
      else assert.match(res.body, /<result totalCount="0" startIndex="0" pageSize="10" more="false"\/>/);
    });

    test(`${format}: defaults are the first 10 by publishDate ascending, full document records`, async () => {
      const r = await list(c, {}, format);
      assert.equal(r.totalCount, 12);
      assert.equal(r.startIndex, 0);
      assert.equal(r.pageSize, 10);
      assert.equal(r.more, true);
      assert.deepEqual(ids(r.docs), expectedOrder(mine, "publishDate", "asc").slice(0, 10));
      const first = r.docs[0]!;
      const src = mine.find((d) => d.documentId === first.documentId)!;
      assert.equal(first.username, "tester");
      assert.equal(first.name, src.name);
      assert.equal(first.publishDate, new Date(src.publishDate).toISOString());
      assert.equal(String(first.ep), String(Math.floor(src.updatedAt / 1000)));
      assert.equal(String(first.pageCount), String(src.pageCount));
      assert.deepEqual(first.tags, []);
      assert.deepEqual(first.folders, []);
      assert.deepEqual(Object.keys(first), [
        "username", "name", "documentId", "revisionId", "publicationId", "title", "access", "state", "errorCode", "errorMessage",
        "category", "type", "orgDocType", "orgDocName", "origin", "language", "pageCount", "publishDate", "description", "tags",
        "folders", "ep", "commentsAllowed", "ratingsAllowed", "downloadable", "explicit", "infoLink", "soundUrl", "coverWidth", "coverHeight",
        "rating", "ratingDist",
      ].filter((k) => format === "json" || !["tags", "folders"].includes(k)).concat(format === "xml" ? ["tags", "folders"] : []));
      if (format === "json") {
        assert.equal(typeof first.pageCount, "number");
        assert.equal(typeof first.ep, "number");
        assert.equal(typeof first.commentsAllowed, "boolean");
      }
    });
  }

  test("POST answers as GET does", async () => {
    const viaPost = readList(await call(c, "documents.list", { pageSize: "3" }, "json", true), "json");
    assert.deepEqual(viaPost, await list(c, { pageSize: "3" }));
  });
});

describe("paging", () => {
  for (const format of FORMATS) {
    test(`${format}: pages follow each other; more is true until the last`, async () => {
      const all = expectedOrder(mine, "publishDate", "asc");
      const p1 = await list(c, { pageSize: "5" }, format);
      const p2 = await list(c, { pageSize: "5", startIndex: "5" }, format);
      const p3 = await list(c, { pageSize: "5", startIndex: "10" }, format);
      assert.deepEqual([ids(p1.docs), ids(p2.docs), ids(p3.docs)], [all.slice(0, 5), all.slice(5, 10), all.slice(10)]);
      assert.deepEqual([p1.more, p2.more, p3.more], [true, true, false]);
      assert.deepEqual([p1.totalCount, p2.totalCount, p3.totalCount], [12, 12, 12]);
      assert.deepEqual([p3.startIndex, p3.pageSize], [10, 5]);
      const exact = await list(c, { pageSize: "6", startIndex: "6" }, format);
      assert.equal(exact.docs.length, 6);
      assert.equal(exact.more, false, "the last item on this page: nothing follows");
    });

    test(`${format}: startIndex at or past the end answers an empty list with the right count`, async () => {
      for (const startIndex of ["12", "13", "999999999"]) {
        const r = await list(c, { startIndex }, format);
        assert.deepEqual(r, { totalCount: 12, startIndex: Number(startIndex), pageSize: 10, more: false, docs: [] });
      }
    });

    test(`${format}: pageSize 0 answers the counts alone; 100 is allowed`, async () => {
      const zero = await list(c, { pageSize: "0" }, format);
      assert.deepEqual(zero, { totalCount: 12, startIndex: 0, pageSize: 0, more: true, docs: [] });
      const zeroFiltered = await list(c, { pageSize: "0", documentStates: "P" }, format);
      assert.equal(zeroFiltered.totalCount, 3);
      const hundred = await list(c, { pageSize: "100" }, format);
      assert.equal(hundred.docs.length, 12);
      assert.equal(hundred.pageSize, 100);
      assert.equal(hundred.more, false);
    });
  }

  test("pageSize and startIndex: malformed values are 201 on the field", async () => {
    for (const pageSize of ["101", "-1", "1.5", "abc", " 5", "1e2", "0x10", "1000000000"]) await refused(c, "documents.list", { pageSize }, "201", "pageSize");
    for (const startIndex of ["-1", "x", "1.0", "+1", "1000000000"]) await refused(c, "documents.list", { startIndex }, "201", "startIndex");
    // empty counts as absent (decisions §4)
    assert.equal((await list(c, { pageSize: "", startIndex: "" })).pageSize, 10);
  });
});

describe("sorting", () => {
  const FIELDS = ["publishDate", "title", "name", "documentId", "description", "pageCount", "ep"];
  for (const sortBy of FIELDS) {
    for (const order of ["asc", "desc"] as const) {
      test(`${sortBy} ${order}: stable, ties by documentId in the same direction, across pages`, async () => {
        const want = expectedOrder(mine, sortBy, order);
        const whole = await list(c, { documentSortBy: sortBy, resultOrder: order, pageSize: "100" });
        assert.deepEqual(ids(whole.docs), want);
        const pageA = await list(c, { documentSortBy: sortBy, resultOrder: order, pageSize: "7" }, "xml");
        const pageB = await list(c, { documentSortBy: sortBy, resultOrder: order, pageSize: "7", startIndex: "7" }, "xml");
        assert.deepEqual([...ids(pageA.docs), ...ids(pageB.docs)], want);
      });
    }
  }

  test("resultOrder defaults to asc", async () => {
    assert.deepEqual(ids((await list(c, { documentSortBy: "title", pageSize: "100" })).docs), expectedOrder(mine, "title", "asc"));
  });

  test("unknown sort field or order is 201", async () => {
    for (const documentSortBy of ["username", "PublishDate", "updatedAt", "state", "x"]) await refused(c, "documents.list", { documentSortBy }, "201", "documentSortBy");
    for (const resultOrder of ["ASC", "descending", "up", "1"]) await refused(c, "documents.list", { resultOrder }, "201", "resultOrder");
  });
});

describe("filters", () => {
  const count = async (params: Record<string, string>) => (await list(c, { ...params, pageSize: "100" })).docs;
  const where = (pred: (d: DocumentRecord) => boolean) => expectedOrder(mine.filter(pred), "publishDate", "asc");

  test("access", async () => {
    assert.deepEqual(ids(await count({ access: "private" })), where((d) => d.access === "private"));
    assert.deepEqual(ids(await count({ access: "public" })), where((d) => d.access === "public"));
    for (const access of ["Public", "all", "hidden"]) await refused(c, "documents.list", { access }, "201", "access");
  });

  test("documentStates: a list of A, F, P", async () => {
    assert.deepEqual(ids(await count({ documentStates: "A" })), where((d) => d.state === "A"));
    assert.deepEqual(ids(await count({ documentStates: " F , P,F," })), where((d) => d.state !== "A"));
    assert.deepEqual(ids(await count({ documentStates: "A,F,P" })), where(() => true));
    assert.deepEqual(ids(await count({ documentStates: "," })), where(() => true), "a list with no items filters nothing");
    for (const documentStates of ["a", "A,X", "active", "A;F"]) await refused(c, "documents.list", { documentStates }, "201", "documentStates");
  });

  test("orgDocTypes: the supported formats and unknown", async () => {
    assert.deepEqual(ids(await count({ orgDocTypes: "pdf,ppt" })), where((d) => d.orgDocType === "pdf" || d.orgDocType === "ppt"));
    assert.deepEqual(ids(await count({ orgDocTypes: "unknown" })), where((d) => d.orgDocType === "unknown"));
    assert.deepEqual(await count({ orgDocTypes: "doc,wpd,sxw,sxi,rtf,odp" }), []);
    assert.deepEqual(await count({ orgDocTypes: "docx,pptx,xlsx,xls,ods,odg,txt,jpg,png,tif,gif,bmp,webp" }), []);
    // Variants are recorded under their family's type, so their own names are not types.
    for (const orgDocTypes of ["PDF", "pdf,docm", "jpeg", "tiff", "text"]) await refused(c, "documents.list", { orgDocTypes }, "201", "orgDocTypes");
  });

  test("origins", async () => {
    assert.deepEqual(ids(await count({ origins: "apislurp" })), where((d) => d.origin === "apislurp"));
    assert.deepEqual(ids(await count({ origins: "apiupload,apislurp" })), where(() => true));
    for (const origins of ["upload", "apiupload,web"]) await refused(c, "documents.list", { origins }, "201", "origins");
  });

  test("orgDocName: exact match", async () => {
    assert.deepEqual(ids(await count({ orgDocName: "report.pdf" })), where((d) => d.orgDocName === "report.pdf"));
    assert.deepEqual(await count({ orgDocName: "report" }), []);
    assert.deepEqual(await count({ orgDocName: "REPORT.PDF" }), []);
    await refused(c, "documents.list", { orgDocName: "a\u0001b" }, "201", "orgDocName");
    await refused(c, "documents.list", { orgDocName: "a".repeat(2049) }, "201", "orgDocName");
  });

  test("filters combine, and the count is of all that match", async () => {
    const r = await list(c, { documentStates: "A", origins: "apiupload", pageSize: "1" });
    const want = where((d) => d.state === "A" && d.origin === "apiupload");
    assert.equal(r.totalCount, want.length);
    assert.deepEqual(ids(r.docs), want.slice(0, 1));
    assert.equal(r.more, want.length > 1);
  });
});

describe("responseParams", () => {
  for (const format of FORMATS) {
    test(`${format}: keeps only the named fields, in the record's order`, async () => {
      const r = await list(c, { responseParams: "title, documentId,tags,title", pageSize: "3" }, format);
      assert.equal(r.docs.length, 3);
      for (const d of r.docs) assert.deepEqual(Object.keys(d), ["documentId", "title", "tags"]);
      const counts = await list(c, { responseParams: "ep", pageSize: "0" }, format);
      assert.equal(counts.totalCount, 12);
    });

    test(`${format}: an unknown name is 201 on responseParams`, async () => {
      for (const responseParams of ["title,bogus", "Title", "blobId", "accountId"]) {
        await refused(c, "documents.list", { responseParams }, "201", "responseParams", format);
      }
    });
  }

  test("the historic test vector's responseParams are accepted", async () => {
    const r = await list(c, { access: "public", responseParams: "title,description" });
    for (const d of r.docs) assert.deepEqual(Object.keys(d), ["title", "description"]);
  });
});

describe("order of checks: the first offending parameter in table order", () => {
  const BAD: Array<[string, string]> = [
    ["access", "x"],
    ["documentStates", "x"],
    ["orgDocTypes", "x"],
    ["origins", "x"],
    ["orgDocName", "\u0001"],
    ["documentSortBy", "x"],
    ["resultOrder", "x"],
    ["startIndex", "x"],
    ["pageSize", "x"],
    ["responseParams", "x"],
    ["format", "yaml"],
  ];
  for (let i = 0; i < BAD.length; i++) {
    test(`${BAD[i]![0]} before everything after it`, async () => {
      const params: Record<string, string> = Object.fromEntries(BAD.slice(i));
      const format = params.format ? undefined : "json";
      const signed = sign({ action: "svc.documents.list", apiKey: c.apiKey, ...(format ? { format } : {}), ...params }, c.apiSecret);
      const res = await getNormal(c, signed);
      assertError(res, params.format ? "xml" : "json", "201", BAD[i]![0]);
    });
  }

  test("jsonCallback is checked last", async () => {
    await refused(c, "documents.list", { jsonCallback: "1bad" }, "201", "jsonCallback");
  });
});

describe("accounts", () => {
  for (const format of FORMATS) {
    test(`${format}: only the caller's own documents, whatever the filter`, async () => {
      const mineIds = new Set(mine.map((d) => d.documentId));
      const r = await list(c, { pageSize: "100", orgDocName: "report.pdf" }, format);
      assert.ok(ids(r.docs).every((id) => mineIds.has(id)));
      const theirsList = await list(other, { pageSize: "100" }, format);
      assert.deepEqual(new Set(ids(theirsList.docs)), new Set(theirs.map((d) => d.documentId)));
      assert.equal(theirsList.totalCount, 3);
      assert.ok(theirsList.docs.every((d) => d.username === "other"));
    });
  }

  test("JSONP wraps the list", async () => {
    const res = await call(c, "documents.list", { jsonCallback: "cb", pageSize: "1" });
    assert.match(res.body, /^cb\(\{"rsp":\{"_content":\{"result":\{"totalCount":12,/);
  });
});

