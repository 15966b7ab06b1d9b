import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { rawHttp } from "../helpers/api-client.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { signParams } from "../helpers/independent-sign.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import {
  failure,
  fields,
  fileField,
  HANG_GUARD_MS,
  multipartBody,
  newBlobFiles,
  newBoundary,
  parseRsp,
  partHead,
  postMultipart,
  postRaw,
  signedUpload,
  type HttpAnswer,
  type Part,
  type Rsp,
} from "../helpers/multipart.ts";

/** svc.document.upload: transport and parameter rules (interface §4.1, §4.2, §5, §7; decisions §1, §2, §4, §5). */

let server: TestServer;
let pdf: Buffer;
before(async () => {
  server = await startTestServer();
  pdf = await readFile(join(FIXTURES, "pdf-quartz-firefox-1page.pdf"));
});
after(() => server.close());

const endpoint = () => `${server.uploadUrl}/1_0`;
const send = async (parts: Part[], query = "", format: "xml" | "json" = "xml"): Promise<Rsp> => {
  const answer = await postMultipart(endpoint() + query, parts);
  assert.equal(answer.status, 200);
  return parseRsp(answer, format);
};

/** Runs `fn` and asserts it stored nothing: no new blob or spool file, no document, no job. */
async function storesNothing(fn: () => Promise<void>): Promise<void> {
  const files = await server.listBlobFiles();
  const counts = await server.countRecords();
  await fn();
  assert.deepEqual(await newBlobFiles(() => server.listBlobFiles(), files), [], "no blob file and no spool file left");
  assert.deepEqual(await server.countRecords(), counts, "no document and no job");
}

/** `failing` is expected `code/field`; the request must leave nothing behind. */
async function refused(parts: Part[], failing: string, query = ""): Promise<Rsp> {
  let rsp: Rsp | undefined;
  await storesNothing(async () => {
    rsp = await send(parts, query);
    assert.equal(failure(rsp), failing);
  });
  return rsp!;
}

const accountKey = () => server.account.apiKey;
const UNKNOWN_KEY = "0123456789abcdefghijklmnopqrstuv";

describe("the file part", () => {
  test("no file part at all: 200 on file", async () => {
    const rsp = await refused(fields(signedUpload(server.account)), "200/file");
    assert.equal(rsp.error!.message, "Required field is missing");
  });

  test("an empty file part with an empty file name (a form with no file chosen): 200 on file", async () => {
    await refused([...fields(signedUpload(server.account)), fileField(Buffer.alloc(0), "")], "200/file");
  });

  test("a second file part: 201 on file, and the first is not kept", async () => {
    await refused([...fields(signedUpload(server.account)), fileField(pdf, "a.pdf"), fileField(pdf, "b.pdf")], "201/file");
  });

  test("a file part under another name: 201 on that name", async () => {
    await refused([...fields(signedUpload(server.account)), fileField(pdf, "a.pdf", "document")], "201/document");
    await refused([...fields(signedUpload(server.account)), fileField(pdf, "a.pdf"), fileField(pdf, "b.pdf", "attachment")], "201/attachment");
  });

  test("a bad field after the file part: 201 on that field, and the file is not kept", async () => {
    const params = signedUpload(server.account);
    await refused([...fields(params), fileField(pdf, "a.pdf"), { name: "title", value: Buffer.from([0x41, 0xff]) }], "201/title");
    await refused([...fields(params), fileField(pdf, "a.pdf"), { name: "apiKey", value: accountKey() }], "201/apiKey");
  });

  test("a file name that is not valid UTF-8: 201 on file", async () => {
    // "f", 0xFF, 0xFE, ".pdf": bytes no UTF-8 text has; then Latin-1 "Résumé.pdf" (0xE9 alone).
    await refused([...fields(signedUpload(server.account)), fileField(pdf, Buffer.from([0x66, 0xff, 0xfe, 0x2e, 0x70, 0x64, 0x66]))], "201/file");
    await refused([...fields(signedUpload(server.account)), fileField(pdf, Buffer.from("Résumé.pdf", "latin1"))], "201/file");
  });

  test("a UTF-8 file name is kept exactly as orgDocName, and gives the title", async () => {
    for (const format of ["xml", "json"] as const) {
      const params = signedUpload(server.account, format === "json" ? { format } : {});
      const rsp = await send([...fields(params), fileField(pdf, "Résumé 日本.pdf")], "", format);
      assert.equal(rsp.stat, "ok", JSON.stringify(rsp));
      assert.equal(rsp.document!.orgDocName, "Résumé 日本.pdf");
      assert.equal(rsp.document!.title, "Résumé 日本");
    }
  });
});

describe("parameters from the query string and the body", () => {
  test("parameters in the query string of the POST count (and are signed)", async () => {
    const params = signedUpload(server.account, { title: "From the query", format: "json" });
    const query = `?${new URLSearchParams(params)}`;
    const rsp = await send([fileField(pdf, "q.pdf")], query, "json");
    assert.equal(rsp.stat, "ok", JSON.stringify(rsp));
    assert.equal(rsp.document!.title, "From the query");
    assert.equal(rsp.document!.origin, "apiupload");
  });

  test("some in the query, some in the body: all signed together", async () => {
    const params = signedUpload(server.account, { title: "Split", tags: "one,two" });
    const { apiKey, signature, ...rest } = params;
    const rsp = await send([...fields(rest), fileField(pdf, "s.pdf")], `?${new URLSearchParams({ apiKey: apiKey!, signature: signature! })}`);
    assert.equal(rsp.stat, "ok", JSON.stringify(rsp));
    assert.equal(rsp.document!.title, "Split");
    assert.deepEqual(rsp.document!.tags, ["one", "two"]);
  });

  test("a name both in the query and in the body: 201 on that name", async () => {
    const params = signedUpload(server.account, { title: "Twice" });
    await refused([...fields(params), fileField(pdf, "t.pdf")], "201/title", `?${new URLSearchParams({ title: "Twice" })}`);
    await refused([...fields(params), fileField(pdf, "t.pdf")], "201/apiKey", `?${new URLSearchParams({ apiKey: accountKey() })}`);
  });

  test("a name twice in the body: 201 on that name", async () => {
    const params = signedUpload(server.account, { title: "Twice" });
    await refused([...fields(params), { name: "title", value: "Twice" }, fileField(pdf, "t.pdf")], "201/title");
  });
});

describe("authentication", () => {
  test("no apiKey: 009", async () => {
    const params = signParams(server.account.apiSecret, { action: "svc.document.upload" });
    const rsp = await refused([...fields(params), fileField(pdf, "a.pdf")], "009/-");
    assert.equal(rsp.error!.message, "Authentication required");
  });

  test("an unknown or malformed key: 010 (fields before or after the file)", async () => {
    for (const apiKey of [UNKNOWN_KEY, "short", accountKey().toUpperCase()]) {
      const params = signParams(server.account.apiSecret, { apiKey, action: "svc.document.upload" });
      const rsp = await refused([...fields(params), fileField(pdf, "a.pdf")], "010/-");
      assert.equal(rsp.error!.message, "Invalid API key");
      await refused([fileField(pdf, "a.pdf"), ...fields(params)], "010/-");
    }
  });

  test("a wrong signature: 011 (fields before or after the file)", async () => {
    const wrongSecret = signParams("not-the-secret", { apiKey: accountKey(), action: "svc.document.upload" });
    const rsp = await refused([...fields(wrongSecret), fileField(pdf, "a.pdf")], "011/-");
    assert.equal(rsp.error!.message, "Bad signature");
    await refused([fileField(pdf, "a.pdf"), ...fields(wrongSecret)], "011/-");
    // Signed, then a signed value changed.
    const tampered = { ...signedUpload(server.account, { title: "Signed" }), title: "Changed" };
    await refused([...fields(tampered), fileField(pdf, "a.pdf")], "011/-");
  });

  test("the signature covers the fields sent before the file (the file itself is not signed)", async () => {
    const params = signedUpload(server.account, { title: "Before", tags: "x,y", format: "json" });
    const rsp = await send([...fields(params), fileField(pdf, "before.pdf")], "", "json");
    assert.equal(rsp.stat, "ok", JSON.stringify(rsp));
    assert.equal(rsp.document!.title, "Before");
    assert.deepEqual(rsp.document!.tags, ["x", "y"]);
  });

  test("with key, signature and action before the file, a signed field sent after the file makes the signature fail: 011", async () => {
    const params = signedUpload(server.account, { title: "After" });
    const { title, ...head } = params;
    await refused([...fields(head), fileField(pdf, "a.pdf"), { name: "title", value: title! }], "011/-");
  });

  test("with every field after the file, all of them are signed and checked after it", async () => {
    const params = signedUpload(server.account, { title: "All after" });
    const rsp = await send([fileField(pdf, "a.pdf"), ...fields(params)]);
    assert.equal(rsp.stat, "ok", JSON.stringify(rsp));
    assert.equal(rsp.document!.title, "All after");
  });

  test("another action on the upload endpoint: 201 on action", async () => {
    const params = signParams(server.account.apiSecret, { apiKey: accountKey(), action: "svc.document.url_upload", slurpUrl: "https://example.com/a.pdf" });
    await refused([...fields(params), fileField(pdf, "a.pdf")], "201/action");
  });
});

describe("document options on upload, as on url_upload", () => {
  test("name, title, tags, description, access, language, category, type, booleans, publishDate (XML and JSON)", async () => {
    for (const format of ["xml", "json"] as const) {
      const name = `my-doc_1.0-${format}`;
      const params = signedUpload(server.account, {
        name,
        title: "A title",
        tags: " alpha, beta,,alpha ,gamma ",
        description: "What it is about.",
        access: "private",
        language: "en",
        category: "013000",
        type: "009000",
        commentsAllowed: "FALSE",
        downloadable: "true",
        publishDate: "2009-08-19T14:34:56+02:00",
        format,
      });
      const rsp = await send([...fields(params), fileField(pdf, "options.pdf")], "", format);
      assert.equal(rsp.stat, "ok", JSON.stringify(rsp));
      const d = rsp.document!;
      assert.equal(d.name, name);
      assert.equal(d.title, "A title");
      assert.deepEqual(d.tags, ["alpha", "beta", "gamma"]);
      assert.equal(d.description, "What it is about.");
      assert.equal(d.access, "private");
      assert.equal(d.language, "en");
      assert.equal(d.category, "013000");
      assert.equal(d.type, "009000");
      assert.equal(d.publishDate, "2009-08-19T12:34:56.000Z");
      assert.equal(String(d.commentsAllowed), "false");
      assert.equal(String(d.downloadable), "true");
      assert.equal(String(d.ratingsAllowed), "true");
      assert.equal(d.state, "P");
      assert.equal(d.orgDocName, "options.pdf");
    }
  });

  test("defaults: public, no tags, category and type 000000, empty language", async () => {
    const rsp = await send([...fields(signedUpload(server.account, { format: "json" })), fileField(pdf, "defaults.pdf")], "", "json");
    const d = rsp.document!;
    assert.equal(d.access, "public");
    assert.deepEqual(d.tags, []);
    assert.deepEqual(d.folders, []);
    assert.equal(d.category, "000000");
    assert.equal(d.type, "000000");
    assert.equal(d.language, "");
    assert.equal(d.commentsAllowed, true);
    assert.equal(d.downloadable, false);
  });

  test("malformed options are 201 on the first offending one, and nothing is stored", async () => {
    await refused([...fields(signedUpload(server.account, { name: "Has Spaces" })), fileField(pdf, "a.pdf")], "201/name");
    await refused([...fields(signedUpload(server.account, { access: "secret", language: "english" })), fileField(pdf, "a.pdf")], "201/language");
    await refused([...fields(signedUpload(server.account, { category: "123" })), fileField(pdf, "a.pdf")], "201/category");
    await refused([...fields(signedUpload(server.account, { commentsAllowed: "yes" })), fileField(pdf, "a.pdf")], "201/commentsAllowed");
    await refused([...fields(signedUpload(server.account, { description: "d".repeat(1001) })), fileField(pdf, "a.pdf")], "201/description");
    await refused([...fields(signedUpload(server.account, { format: "yaml" })), fileField(pdf, "a.pdf")], "201/format");
  });

  test("a name already taken in the account: 201 on name", async () => {
    const first = await send([...fields(signedUpload(server.account, { name: "taken-name" })), fileField(pdf, "a.pdf")]);
    assert.equal(first.stat, "ok", JSON.stringify(first));
    await refused([...fields(signedUpload(server.account, { name: "taken-name" })), fileField(pdf, "b.pdf")], "201/name");
  });

  test("a file that is not a document wins over a malformed option after it in the table (file comes first): 201 on file", async () => {
    await refused([...fields(signedUpload(server.account, { name: "Bad Name" })), fileField(Buffer.from([0x00, 0x01, 0x02, 0x03, 0xfe, 0xff]), "a.pdf")], "201/file");
  });
});

describe("transport", () => {
  test("svc.document.upload on the normal endpoint with multipart: 200 with no field", async () => {
    const parts = [...fields(signedUpload(server.account)), fileField(pdf, "a.pdf")];
    await storesNothing(async () => {
      const rsp = parseRsp(await postMultipart(`${server.url}/1_0`, parts));
      assert.equal(failure(rsp), "200/-");
    });
  });

  test("the upload endpoint with a form-encoded body: 200 with no field", async () => {
    const body = Buffer.from(new URLSearchParams(signedUpload(server.account)).toString());
    const rsp = parseRsp(await postRaw(endpoint(), { "content-type": "application/x-www-form-urlencoded" }, body));
    assert.equal(failure(rsp), "200/-");
  });

  test("multipart without a boundary: 200 with no field", async () => {
    const boundary = newBoundary();
    const body = multipartBody(boundary, [...fields(signedUpload(server.account)), fileField(pdf, "a.pdf")]);
    const rsp = parseRsp(await postRaw(endpoint(), { "content-type": "multipart/form-data" }, body));
    assert.equal(failure(rsp), "200/-");
  });

  test("a charset other than UTF-8: 201", async () => {
    const boundary = newBoundary();
    const body = multipartBody(boundary, [...fields(signedUpload(server.account)), fileField(pdf, "a.pdf")]);
    const rsp = parseRsp(await postRaw(endpoint(), { "content-type": `multipart/form-data; boundary=${boundary}; charset=iso-8859-1` }, body));
    assert.equal(rsp.error?.code, "201");
  });

  test("a field value that is not UTF-8: 201 on that field", async () => {
    const params = signedUpload(server.account);
    await refused([...fields(params), { name: "title", value: Buffer.from([0x41, 0xff]) }, fileField(pdf, "a.pdf")], "201/title");
  });

  test("every answer is HTTP 200, no-store", async () => {
    const ok = await postMultipart(endpoint(), [...fields(signedUpload(server.account)), fileField(pdf, "a.pdf")]);
    const bad = await postMultipart(endpoint(), [...fields(signedUpload(server.account))]);
    for (const answer of [ok, bad]) {
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["cache-control"], "no-store");
      assert.match(String(answer.headers["content-type"]), /^text\/xml; charset=utf-8$/);
    }
  });
});

/**
 * Sends the head of a body whose Content-Length declares far more, then waits without sending
 * another byte: the answer must come anyway. `timeoutMs` only guards against a hang.
 */
async function sendHeadAndWait(url: string, contentType: string, declaredLength: number, head: Buffer[], timeoutMs = HANG_GUARD_MS): Promise<HttpAnswer> {
  const target = new URL(url);
  let answered!: () => void;
  const over = new Promise<void>((resolve) => (answered = resolve));
  async function* body() {
    yield* head;
    await over;
  }
  try {
    const res = await rawHttp(target.origin, {
      method: "POST",
      path: target.pathname + target.search,
      headers: [["Content-Type", contentType], ["Content-Length", String(declaredLength)]],
      body: body(),
      timeoutMs,
    });
    return { status: res.status, headers: res.headers, text: res.body };
  } finally {
    answered();
  }
}

describe("early refusal: key, signature and action before the file", () => {
  const FIFTY_MIB = 50 * 1024 * 1024;

  async function refusedBeforeTheFile(params: Record<string, string>, failing: string): Promise<void> {
    const boundary = newBoundary();
    const fieldBytes = Buffer.concat(fields(params).map((p) => Buffer.concat([partHead(boundary, p), Buffer.from(p.value as string), Buffer.from("\r\n")])));
    const fileHead = partHead(boundary, { name: "file", filename: "big.pdf" });
    const first64k = Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.alloc(64 * 1024 - 9)]);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const declared = fieldBytes.length + fileHead.length + FIFTY_MIB + tail.length;
    await storesNothing(async () => {
      const answer = await sendHeadAndWait(endpoint(), `multipart/form-data; boundary=${boundary}`, declared, [fieldBytes, fileHead, first64k]);
      assert.equal(answer.status, 200);
      assert.equal(failure(parseRsp(answer)), failing);
    });
  }

  test("a wrong signature is answered 011 without the rest of a 50 MiB file", async () => {
    await refusedBeforeTheFile(signParams("wrong-secret", { apiKey: accountKey(), action: "svc.document.upload" }), "011/-");
  });

  test("an unknown key is answered 010 without the rest of a 50 MiB file", async () => {
    await refusedBeforeTheFile(signParams(server.account.apiSecret, { apiKey: UNKNOWN_KEY, action: "svc.document.upload" }), "010/-");
  });

  test("another action is answered 201 on action without the rest of a 50 MiB file", async () => {
    await refusedBeforeTheFile(signParams(server.account.apiSecret, { apiKey: accountKey(), action: "svc.document.url_upload" }), "201/action");
  });

  test("the server still serves uploads afterwards", async () => {
    const rsp = await send([...fields(signedUpload(server.account)), fileField(pdf, "after.pdf")]);
    assert.equal(rsp.stat, "ok", JSON.stringify(rsp));
  });
});
