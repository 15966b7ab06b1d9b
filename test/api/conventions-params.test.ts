import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { acceptedUrlUpload, type Caller, callerOf, expectFailure, getNormal, type Params, postNormal, refusedUrlUpload, sign, URL_UPLOAD, urlUpload } from "../helpers/api-client.ts";
import { type Format } from "../helpers/api-answers.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * Step 6 of decisions §2 for svc.document.url_upload: its required slurpUrl, then every optional
 * parameter of interface §4.2 in table order, with the value rules of decisions §4. Every refused
 * request stores nothing (expectFailure), every accepted one one document and one job.
 */

let server: TestServer;
let c: Caller;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
});
after(() => server.close());

const FORMATS = ["xml", "json"] as const;

const accepted = (extra: Params, format: Format = "json") => acceptedUrlUpload(server, c, extra, format);

const refused = (extra: Params, field: string, format: Format = "json") => refusedUrlUpload(server, c, extra, field, format);

/** XML answers booleans as attribute text, JSON as booleans. */
const b = (format: Format, v: boolean): unknown => (format === "xml" ? String(v) : v);

describe("slurpUrl (required)", () => {
  for (const format of FORMATS) {
    test(`${format}: missing or empty is 200 on slurpUrl`, async () => {
      const missing = sign({ format, action: URL_UPLOAD, apiKey: c.apiKey }, c.apiSecret);
      await expectFailure(server, () => getNormal(c, missing), format, "200", "slurpUrl");
      await expectFailure(server, () => getNormal(c, urlUpload(c, { format, slurpUrl: "" })), format, "200", "slurpUrl");
      // required before optional: a bad name behind it is not reached
      const both = sign({ format, action: URL_UPLOAD, apiKey: c.apiKey, name: "X" }, c.apiSecret);
      await expectFailure(server, () => getNormal(c, both), format, "200", "slurpUrl");
    });

    test(`${format}: not an absolute http(s) URL of at most 2048 characters is 201 on slurpUrl`, async () => {
      const bad = [
        "ftp://example.com/a/report.pdf",
        "/a/report.pdf",
        "report.pdf",
        "https://",
        "mailto:someone@example.com",
        "file:///etc/passwd",
        "https://example.com/a b.pdf",
        `https://example.com/${"a".repeat(2048 - 20)}.pdf`,
      ];
      for (const slurpUrl of bad) await refused({ slurpUrl }, "slurpUrl", format);
    });
  }

  test("2048 characters are accepted, counted as characters", async () => {
    const exact = `https://example.com/${"a".repeat(2048 - 24)}.pdf`;
    assert.equal(exact.length, 2048);
    assert.equal((await accepted({ slurpUrl: exact })).orgDocName, exact);
    // 2048 characters, one of them outside the BMP (two UTF-16 units)
    const astral = `https://example.com/\u{1F600}${"a".repeat(2048 - 25)}.pdf`;
    assert.equal([...astral].length, 2048);
    assert.equal((await accepted({ slurpUrl: astral })).orgDocName, astral);
  });
});

describe("the first offending parameter in table order is named", () => {
  // interface §4.2 order, each with a malformed value
  const BAD: Array<[string, string]> = [
    ["name", "Bad Name"],
    ["title", "x\u0001"],
    ["tags", Array.from({ length: 51 }, (_, i) => `t${i}`).join(",")],
    ["commentsAllowed", "yes"],
    ["description", "d".repeat(1001)],
    ["downloadable", "1"],
    ["infoLink", "ftp://example.com/info"],
    ["language", "xx"],
    ["access", "secret"],
    ["explicit", "no"],
    ["category", "999999"],
    ["type", "1000"],
    ["ratingsAllowed", "maybe"],
    ["soundUrl", "https://example.com/a.wav"],
    ["publishDate", "yesterday"],
    ["folderIds", "no-such-folder"],
    ["format", "yaml"],
    ["jsonCallback", "alert(1)"],
  ];
  for (let i = 0; i < BAD.length; i++) {
    const [field] = BAD[i]!;
    test(`${field} when it and every later one are bad`, async () => {
      const extra = Object.fromEntries(BAD.slice(i));
      // with format itself bad the answer is XML; after it, JSON asked for and answered plain
      const format: Format = i <= BAD.length - 2 ? "xml" : "json";
      if (field === "jsonCallback") extra.format = "json";
      await expectFailure(server, () => postNormal(c, urlUpload(c, extra)), format, "201", field);
    });
  }
});

describe("name", () => {
  for (const format of FORMATS) {
    test(`${format}: 3-50 of [a-z0-9_.-] is answered as given`, async () => {
      for (const name of [`ok-${format}_1.x`, `${format[0]}-1`, `${format}${"z".repeat(47 - format.length)}a-b`]) {
        const doc = await accepted({ name }, format);
        assert.equal(doc.name, name);
        assert.notEqual(doc.documentId, name);
      }
    });

    test(`${format}: too short, too long, uppercase, space, other characters are 201 on name`, async () => {
      for (const name of ["ab", "n".repeat(51), "Report", "my doc", "my/doc", "café", "a+b"]) await refused({ name }, "name", format);
    });
  }

  test("a name the account already uses is 201 on name, also a documentId standing in as name", async () => {
    await accepted({ name: "taken-name" });
    await refused({ name: "taken-name" }, "name");
    const unnamed = await accepted({});
    await refused({ name: unnamed.documentId as string }, "name");
    // an empty name is absent: the documentId is used
    const doc = await accepted({ name: "" });
    assert.equal(doc.name, doc.documentId);
  });
});

describe("title, tags, description", () => {
  for (const format of FORMATS) {
    test(`${format}: title is answered as given; over 500 characters (docs/api.md) is 201`, async () => {
      assert.equal((await accepted({ title: "Größe 日本 report" }, format)).title, "Größe 日本 report");
      assert.equal((await accepted({ title: "t".repeat(500) }, format)).title, "t".repeat(500));
      await refused({ title: "t".repeat(501) }, "title", format);
    });

    test(`${format}: tags are trimmed, empties dropped, duplicates removed keeping the first`, async () => {
      const doc = await accepted({ tags: " beta , alpha,, beta ,gamma,alpha, ,Größe" }, format);
      assert.deepEqual(doc.tags, ["beta", "alpha", "gamma", "Größe"]);
      assert.deepEqual((await accepted({ tags: "" }, format)).tags, []);
      assert.deepEqual((await accepted({ tags: " , ," }, format)).tags, []);
    });

    test(`${format}: 50 tags of 100 characters are fine; 51 tags or a tag of 101 are 201 on tags`, async () => {
      const fifty = Array.from({ length: 50 }, (_, i) => `${i}`.padStart(100, "é"));
      assert.deepEqual((await accepted({ tags: fifty.join(",") }, format)).tags, fifty);
      // 51 items of which two are the same: 50 tags
      assert.equal(((await accepted({ tags: [...fifty, fifty[0]].join(",") }, format)).tags as string[]).length, 50);
      await refused({ tags: [...fifty, "one-more"].join(",") }, "tags", format);
      await refused({ tags: `ok,${"x".repeat(101)}` }, "tags", format);
      await refused({ tags: "ok,a\u0002b" }, "tags", format);
    });

    test(`${format}: description up to 1000 characters, counted as characters`, async () => {
      for (const description of ["d".repeat(1000), "é".repeat(1000), "\u{1F600}".repeat(1000)]) {
        assert.equal((await accepted({ description }, format)).description, description);
      }
      for (const description of ["d".repeat(1001), "é".repeat(1001), "\u{1F600}".repeat(1001)]) {
        await refused({ description }, "description", format);
      }
    });
  }
});

describe("booleans", () => {
  const DEFAULTS: Array<[string, boolean]> = [
    ["commentsAllowed", true],
    ["downloadable", false],
    ["explicit", false],
    ["ratingsAllowed", true],
  ];
  for (const format of FORMATS) {
    test(`${format}: defaults true/false/false/true, empty values included`, async () => {
      const plain = await accepted({}, format);
      const empty = await accepted(Object.fromEntries(DEFAULTS.map(([f]) => [f, ""])), format);
      for (const [field, value] of DEFAULTS) {
        assert.equal(plain[field], b(format, value), field);
        assert.equal(empty[field], b(format, value), field);
      }
    });

    test(`${format}: true/false in any case; anything else is 201 on the parameter`, async () => {
      for (const [field, dflt] of DEFAULTS) {
        const flipped = !dflt;
        const spelled = flipped ? "TRUE" : "False";
        assert.equal((await accepted({ [field]: spelled }, format))[field], b(format, flipped), `${field}=${spelled}`);
        assert.equal((await accepted({ [field]: dflt ? "tRuE" : "FALSE" }, format))[field], b(format, dflt));
        for (const bad of ["yes", "1", "0", "on", " true"]) await refused({ [field]: bad }, field, format);
      }
    });

    test(`${format}: ratingAllowed is another spelling of ratingsAllowed`, async () => {
      assert.equal((await accepted({ ratingAllowed: "false" }, format)).ratingsAllowed, b(format, false));
      assert.equal((await accepted({ ratingAllowed: "TRUE" }, format)).ratingsAllowed, b(format, true));
      await refused({ ratingAllowed: "yes" }, "ratingAllowed", format);
    });
  }
});
