import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Caller, callerOf, expectFailure, getNormal, postNormal, rawHttp, type RawResponse, sign, SLURP, urlUpload } from "../helpers/api-client.ts";
import { assertDocument, assertError, type Format, JSON_TYPE, JSONP_TYPE, readJson, XML_TYPE } from "../helpers/api-answers.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * The answer of the API (interface §4.1, §2.1; decisions §1, §5), with svc.document.url_upload as
 * the vehicle: envelope in XML, JSON and JSONP, the full document record, escaping, other methods,
 * and that a failure stores nothing while a success stores one document and one job.
 */

let server: TestServer;
let c: Caller;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
});
after(() => server.close());

const SCALARS = [
  "username", "name", "documentId", "revisionId", "publicationId", "title", "access", "state", "errorCode", "errorMessage",
  "category", "type", "orgDocType", "orgDocName", "origin", "language", "pageCount", "publishDate", "description", "ep",
  "commentsAllowed", "ratingsAllowed", "downloadable", "explicit", "infoLink", "soundUrl", "coverWidth", "coverHeight",
];

/** XML answers every value as an attribute string; JSON keeps numbers and booleans typed. */
function as(format: Format, v: number | boolean): unknown {
  return format === "xml" ? String(v) : v;
}

/** Sends one url_upload and checks that exactly one document and one job appeared. */
async function created(send: () => Promise<RawResponse>, format: Format): Promise<{ doc: Record<string, unknown>; res: RawResponse }> {
  const before = await server.countRecords();
  const res = await send();
  const doc = assertDocument(res, format);
  const now = await server.countRecords();
  assert.deepEqual(now, { documents: before.documents + 1, jobs: before.jobs + 1 }, "one document and one job row");
  return { doc, res };
}

/** Checks the record of a fresh url_upload of SLURP with no optional parameter (decisions §5). */
function assertFreshRecord(doc: Record<string, unknown>, format: Format): void {
  for (const field of SCALARS) assert.ok(field in doc, `field ${field}`);
  assert.equal(doc.username, "tester");
  assert.equal(doc.state, "P");
  assert.equal(doc.origin, "apislurp");
  assert.equal(doc.access, "public");
  assert.equal(doc.pageCount, as(format, 0));
  assert.equal(doc.category, "000000");
  assert.equal(doc.type, "000000");
  assert.equal(doc.language, "");
  assert.equal(doc.description, "");
  assert.equal(doc.orgDocName, SLURP);
  assert.equal(doc.orgDocType, "pdf");
  assert.equal(doc.title, "report");
  assert.equal(doc.errorCode, as(format, 0));
  assert.equal(doc.errorMessage, "");
  assert.equal(doc.commentsAllowed, as(format, true));
  assert.equal(doc.ratingsAllowed, as(format, true));
  assert.equal(doc.downloadable, as(format, false));
  assert.equal(doc.explicit, as(format, false));
  assert.equal(doc.infoLink, "");
  assert.equal(doc.soundUrl, "");
  assert.equal(doc.coverWidth, as(format, 0));
  assert.equal(doc.coverHeight, as(format, 0));
  assert.deepEqual(doc.tags, []);
  assert.deepEqual(doc.folders, []);

  const documentId = doc.documentId as string;
  assert.equal(documentId.length, 45);
  assert.match(documentId, /^\d{12}-[0-9a-f]{32}$/);
  assert.equal(documentId, `${doc.revisionId as string}-${doc.publicationId as string}`);
  assert.equal(doc.name, documentId, "name is the documentId when none was given");

  // publishDate: the time of the request, UTC with milliseconds; revisionId and ep are that same time.
  const publishDate = doc.publishDate as string;
  assert.match(publishDate, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.equal(doc.revisionId, publishDate.slice(2, 19).replace(/[-T:]/g, ""), "revisionId is yymmddhhmmss UTC");
  assert.equal(doc.ep, as(format, Math.floor(Date.parse(publishDate) / 1000)));
}

describe("success envelope", () => {
  test("XML: <?xml?> then rsp stat=ok holding a document with simple fields as attributes", async () => {
    const { doc, res } = await created(() => getNormal(c, urlUpload(c)), "xml");
    assert.equal(res.headers["content-type"], XML_TYPE);
    assert.match(res.body, /^<\?xml version="1\.0" encoding="UTF-8"\?><rsp stat="ok"><document /);
    assertFreshRecord(doc, "xml");
    const startTag = /<document ([^>]*?)\/?>/.exec(res.body)?.[1] ?? "";
    for (const field of SCALARS) assert.match(startTag, new RegExp(`(^| )${field}="`), `${field} is an attribute`);
    assert.match(res.body, /<tags\s*\/>|<tags><\/tags>/, "tags child, empty");
    assert.match(res.body, /<folders\s*\/>|<folders><\/folders>/, "folders child, empty");
  });

  test("JSON: {rsp:{_content:{document},stat:ok}} with _content first and numbers as numbers", async () => {
    const { doc, res } = await created(() => getNormal(c, urlUpload(c, { format: "json" })), "json");
    assert.equal(res.headers["content-type"], JSON_TYPE);
    assert.ok(res.body.startsWith('{"rsp":{"_content":{"document":{'), res.body);
    assert.ok(res.body.endsWith('}},"stat":"ok"}}'), res.body);
    assertFreshRecord(doc, "json");
    assert.equal(typeof doc.pageCount, "number");
    assert.equal(typeof doc.ep, "number");
  });

  test("the same request by form-encoded POST answers the same record", async () => {
    const { doc } = await created(() => postNormal(c, urlUpload(c, { format: "json" })), "json");
    assertFreshRecord(doc, "json");
  });

  for (const callback of ["cb", "jQuery123_456", "app.handlers.done"]) {
    test(`JSONP: body is exactly ${callback}( + the JSON + ), application/javascript`, async () => {
      const res = await getNormal(c, urlUpload(c, { format: "json", jsonCallback: callback }));
      assert.equal(res.status, 200);
      assert.equal(res.headers["cache-control"], "no-store");
      assert.equal(res.headers["content-type"], JSONP_TYPE);
      assert.ok(res.body.startsWith(`${callback}(`) && res.body.endsWith(")"), res.body);
      const answer = readJson(res.body.slice(callback.length + 1, -1));
      assert.equal(answer.stat, "ok");
      assertFreshRecord(answer.document!, "json");
    });
  }

  test("the answer names the document the store holds", async () => {
    const { doc } = await created(() => getNormal(c, urlUpload(c, { format: "json" })), "json");
    const owner = await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey);
    const stored = await server.services.store.documents.getById(owner!.accountId, doc.documentId as string);
    assert.ok(stored, "stored under its documentId");
    assert.equal(stored.state, "P");
    assert.equal(stored.name, doc.name);
  });
});

describe("failure envelope", () => {
  test("XML: rsp stat=fail holding one error with code, message and no field", async () => {
    const res = await getNormal(c, { action: "svc.document.url_upload", slurpUrl: SLURP });
    assertError(res, "xml", "009");
    assert.match(res.body, /^<\?xml version="1\.0" encoding="UTF-8"\?><rsp stat="fail"><error /);
    assert.match(res.body, /<error [^>]*code="009"/, "code keeps its leading zeros");
    assert.match(res.body, /<error [^>]*message="Authentication required"/);
    assert.doesNotMatch(res.body, /field=/);
  });

  test("JSON: error code is a 3-digit string, _content before stat", async () => {
    const res = await getNormal(c, { format: "json", action: "svc.document.url_upload", slurpUrl: SLURP });
    assertError(res, "json", "009");
    assert.ok(res.body.startsWith('{"rsp":{"_content":{"error":{'), res.body);
    assert.ok(res.body.endsWith('}},"stat":"fail"}}'), res.body);
    assert.match(res.body, /"code":"009"/);
    assert.deepEqual(JSON.parse(res.body), {
      rsp: { _content: { error: { code: "009", message: "Authentication required" } }, stat: "fail" },
    });
  });

  for (const format of ["xml", "json"] as const) {
    test(`${format}: a malformed parameter is named in field`, async () => {
      const res = await getNormal(c, urlUpload(c, { format, slurpUrl: "ftp://example.com/a.pdf" }));
      assertError(res, format, "201", "slurpUrl");
      assert.match(res.body, format === "xml" ? /field="slurpUrl"/ : /"field":"slurpUrl"/);
    });
  }

  test("JSONP wraps failures too", async () => {
    const res = await getNormal(c, { format: "json", jsonCallback: "cb", action: "svc.document.url_upload" });
    assert.equal(res.headers["content-type"], JSONP_TYPE);
    assert.equal(res.body, 'cb({"rsp":{"_content":{"error":{"code":"009","message":"Authentication required"}},"stat":"fail"}})');
  });

  test("a failing request leaves no record", async () => {
    const before = await server.countRecords();
    assertError(await getNormal(c, urlUpload(c, { language: "xx" })), "xml", "201", "language");
    assertError(await getNormal(c, urlUpload(c, { format: "json", slurpUrl: "" })), "json", "200", "slurpUrl");
    assertError(await getNormal(c, { ...urlUpload(c), signature: "0".repeat(32) }), "xml", "011");
    assert.deepEqual(await server.countRecords(), before);
  });
});

describe("XML escaping", () => {
  const title = "a\"b<c>&d'e ]]> \n\tx";

  for (const format of ["xml", "json"] as const) {
    test(`${format}: quotes, markup, ]]>, newline and tab in a title come back exactly`, async () => {
      const { doc, res } = await created(() => postNormal(c, urlUpload(c, { format, title })), format);
      assert.equal(doc.title, title);
      if (format === "xml") assert.match(res.body, /title="a&quot;b&lt;c&gt;&amp;d'e ]]&gt; &#10;&#9;x"/);
    });

    test(`${format}: a control character (U+0001) or U+FFFE in a title is 201 title`, async () => {
      const before = await server.countRecords();
      assertError(await postNormal(c, urlUpload(c, { format, title: "a\u0001b" })), format, "201", "title");
      assertError(await postNormal(c, urlUpload(c, { format, title: "a\uFFFEb" })), format, "201", "title");
      assert.deepEqual(await server.countRecords(), before);
    });
  }

  test("a carriage return in a title survives an XML parser", async () => {
    const { doc } = await created(() => postNormal(c, urlUpload(c, { title: "one\r\ntwo" })), "xml");
    assert.equal(doc.title, "one\r\ntwo");
  });

  test("a title made from an address escaping a control character is answered alike in XML and JSON", async () => {
    // docs/api.md: such a segment is kept as sent
    for (const [slurpUrl, title] of [["https://example.com/a%01b.pdf", "a%01b"], ["https://example.com/a%EF%BF%BEb.pdf", "a%EF%BF%BEb"]] as const) {
      const xml = (await created(() => getNormal(c, urlUpload(c, { slurpUrl })), "xml")).doc;
      const json = (await created(() => getNormal(c, urlUpload(c, { slurpUrl, format: "json" })), "json")).doc;
      assert.equal(xml.title, json.title, slurpUrl);
      assert.equal(json.title, title);
      assert.equal(xml.orgDocName, slurpUrl);
      assert.equal(json.orgDocName, slurpUrl);
    }
  });
});

describe("file names XML cannot carry", () => {
  for (const format of ["xml", "json"] as const) {
    test(`${format}: an uploaded file named with an escaped control character is 201 on file`, async () => {
      const fields = sign({ action: "svc.document.upload", apiKey: c.apiKey, format }, c.apiSecret);
      const boundary = "quireBoundary7";
      let head = "";
      for (const [k, v] of Object.entries(fields)) head += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
      head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''a%01b.pdf\r\n\r\n`;
      const body = `${head}%PDF-1.4\n%%EOF\n\r\n--${boundary}--\r\n`;
      const send = () =>
        rawHttp(server.url, {
          method: "POST",
          path: "/upload/1_0",
          headers: [["Content-Type", `multipart/form-data; boundary=${boundary}`], ["Content-Length", String(Buffer.byteLength(body))]],
          body,
        });
      await expectFailure(server, send, format, "201", "file");
    });
  }
});

describe("title and orgDocType from the address (decisions §5)", () => {
  const cases: Array<[string, string, string]> = [
    ["https://example.com/docs/Gr%C3%B6%C3%9Fe%20Bericht.pdf", "Größe Bericht", "pdf"],
    ["https://example.com/a/REPORT.PPT?x=1#top", "REPORT", "ppt"],
    ["http://example.com/a/notes.odt", "notes", "odt"],
    ["https://example.com/a/file.txt", "file", "txt"],
    ["https://example.com/a/photo.JPEG", "photo", "jpg"],
    ["https://example.com/a/scan.tiff", "scan", "tif"],
    ["https://example.com/a/macros.docm", "macros", "docx"],
    ["https://example.com/a/bundle.zip", "bundle", "unknown"],
    ["https://example.com/a/archive", "archive", "unknown"],
    ["https://example.com/", "Untitled", "unknown"],
    ["https://example.com", "Untitled", "unknown"],
  ];
  for (const [slurpUrl, title, orgDocType] of cases) {
    test(`${slurpUrl} → title ${title}, orgDocType ${orgDocType}`, async () => {
      for (const format of ["xml", "json"] as const) {
        const { doc } = await created(() => getNormal(c, urlUpload(c, { slurpUrl, format })), format);
        assert.equal(doc.title, title);
        assert.equal(doc.orgDocType, orgDocType);
        assert.equal(doc.orgDocName, slurpUrl);
      }
    });
  }

  test("the caller's title wins", async () => {
    const { doc } = await created(() => getNormal(c, urlUpload(c, { title: "Mine" })), "xml");
    assert.equal(doc.title, "Mine");
  });
});

describe("other HTTP methods", () => {
  for (const path of ["/1_0", "/upload/1_0"]) {
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      test(`${method} ${path} is HTTP 405 with an Allow header`, async () => {
        const before = await server.countRecords();
        const res = await rawHttp(server.url, { method, path: `${path}?${new URLSearchParams(urlUpload(c))}`, headers: [["Content-Length", "0"]] });
        assert.equal(res.status, 405);
        const allow = (res.headers.allow ?? "").split(",").map((m) => m.trim());
        assert.ok(allow.includes("POST"), `Allow: ${res.headers.allow}`);
        assert.ok(!allow.includes(method), `Allow: ${res.headers.allow}`);
        assert.deepEqual(await server.countRecords(), before);
      });
    }
  }

  for (const format of ["xml", "json"] as const) {
    test(`${format}: GET on the upload endpoint is an envelope with error 200, no field`, async () => {
      const res = await rawHttp(server.uploadUrl, { method: "GET", path: `/upload/1_0?${new URLSearchParams(urlUpload(c, { format }))}` });
      assertError(res, format, "200");
    });
  }
});
