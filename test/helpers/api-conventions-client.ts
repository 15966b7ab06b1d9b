import assert from "node:assert/strict";
import { connect } from "node:net";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { independentSignature } from "./independent-sign.ts";
import type { TestServer } from "./test-server.ts";

/**
 * Helpers of the api-conventions tests: requests written byte for byte over a socket, and answers
 * read in both formats into one shape. Signatures come from independent-sign.ts only.
 */

/** Messages exactly as the interface document §7 writes them. */
export const MESSAGES: Record<string, string> = {
  "009": "Authentication required",
  "010": "Invalid API key",
  "011": "Bad signature",
  "200": "Required field is missing",
  "201": "Invalid field format",
};

export const XML_TYPE = "text/xml; charset=utf-8";
export const JSON_TYPE = "application/json; charset=utf-8";
export const JSONP_TYPE = "application/javascript; charset=utf-8";
export const FORM = "application/x-www-form-urlencoded";
export const URL_UPLOAD = "svc.document.url_upload";
export const SLURP = "https://example.com/a/report.pdf";

export interface RawResponse {
  status: number;
  /** Header names lowercased; a repeated header keeps its values joined by ", ". */
  headers: Record<string, string>;
  bytes: Buffer;
  body: string;
}

export interface RawRequest {
  method: string;
  /** Path and query exactly as written on the request line (ASCII). */
  path: string;
  /** Sent as given, in this order, after Host; nothing else is added but `Connection: close`. */
  headers?: Array<[string, string]>;
  body?: Buffer | string;
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf("\r\n", at);
    const size = parseInt(data.subarray(at, eol).toString("latin1"), 16);
    if (!(size > 0)) break;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** One request over its own connection, every byte of it chosen by the caller. */
export function rawHttp(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body);
  let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n`;
  for (const [name, value] of req.headers ?? []) head += `${name}: ${value}\r\n`;
  head += "Connection: close\r\n\r\n";
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("end", () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf("\r\n\r\n");
      if (split === -1) return reject(new Error(`no HTTP answer: ${all.toString("latin1")}`));
      const [statusLine = "", ...lines] = all.subarray(0, split).toString("latin1").split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      let bytes: Buffer = all.subarray(split + 4);
      if (/chunked/i.test(headers["transfer-encoding"] ?? "")) bytes = dechunk(bytes);
      else if (headers["content-length"] !== undefined) bytes = bytes.subarray(0, Number(headers["content-length"]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, bytes, body: bytes.toString("utf8") });
    });
    socket.write(Buffer.concat([Buffer.from(head, "latin1"), body]));
  });
}

export type Params = Record<string, string>;
export type Pairs = Array<[string, string]>;

/** `a=1&b=2` with every reserved byte percent-encoded (spaces as %20). */
export function formEncode(params: Params | Pairs): string {
  const pairs = Array.isArray(params) ? params : Object.entries(params);
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
}

/** The account's key, the signature over every other parameter (independently computed). */
export function sign(params: Params, secret: string): Params {
  return { ...params, signature: independentSignature(secret, params) };
}

export interface Caller {
  server: TestServer;
  apiKey: string;
  apiSecret: string;
}

export function callerOf(server: TestServer): Caller {
  return { server, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret };
}

/** A signed url_upload with a fresh address; `extra` is added (and signed) on top. */
export function urlUpload(c: Caller, extra: Params = {}): Params {
  return sign({ action: URL_UPLOAD, apiKey: c.apiKey, slurpUrl: SLURP, ...extra }, c.apiSecret);
}

/** GET on the normal endpoint with the parameters in the query. */
export function getNormal(c: Caller, params: Params | string, headers: Array<[string, string]> = []): Promise<RawResponse> {
  const query = typeof params === "string" ? params : formEncode(params);
  return rawHttp(c.server.url, { method: "GET", path: `/1_0?${query}`, headers });
}

/** Form-encoded POST on the normal endpoint, parameters in the body. */
export function postNormal(c: Caller, params: Params | string, contentType = FORM, query = ""): Promise<RawResponse> {
  const body = typeof params === "string" ? params : formEncode(params);
  return rawHttp(c.server.url, {
    method: "POST",
    path: `/1_0${query === "" ? "" : `?${query}`}`,
    headers: [["Content-Type", contentType], ["Content-Length", String(Buffer.byteLength(body))]],
    body,
  });
}

/** A multipart/form-data body of plain fields (no file part). */
export function multipart(params: Params, boundary = "quireTestBoundary42"): { body: string; contentType: string } {
  let body = "";
  for (const [k, v] of Object.entries(params)) {
    body += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  }
  body += `--${boundary}--\r\n`;
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface ErrorInfo {
  code: string;
  message: string;
  field: string | undefined;
}

export interface Answer {
  stat: string;
  error?: ErrorInfo;
  /** The document with every field as a string (XML) or as JSON typed it. */
  document?: Record<string, unknown>;
}

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: false,
  // decodes character references (&#10;) as any XML parser does
  htmlEntities: true,
  isArray: (name) => name === "tag" || name === "folder",
});

/** Characters XML 1.0 cannot carry at all, which the validator does not look for. */
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export function parseXml(body: string): Record<string, unknown> {
  assert.equal(XMLValidator.validate(body), true, `well-formed XML: ${body}`);
  assert.doesNotMatch(body, NOT_XML_CHAR, "only characters XML 1.0 allows");
  // A conforming parser turns a raw tab, LF or CR inside an attribute value into a space; only
  // character references survive it, so none may appear raw there.
  for (const m of body.matchAll(/="([^"]*)"/g)) assert.doesNotMatch(m[1]!, /[\t\n\r]/, `raw whitespace in attribute ${m[0]}`);
  return xmlParser.parse(body) as Record<string, unknown>;
}

/** The answer read as XML: `rsp` with `stat`, one `error` or one `document` (tags/folders as lists). */
export function readXml(body: string): Answer {
  assert.match(body, /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*<rsp stat="(ok|fail)"/);
  const rsp = parseXml(body).rsp as Record<string, unknown>;
  assert.ok(rsp, "root element rsp");
  const answer: Answer = { stat: rsp.stat as string };
  const error = rsp.error as Record<string, string> | undefined;
  if (error) answer.error = { code: error.code!, message: error.message!, field: error.field };
  const doc = rsp.document as Record<string, unknown> | undefined;
  if (doc) {
    const tags = doc.tags as { tag?: Array<{ value: string }> } | "";
    const folders = doc.folders as { folder?: Array<{ id: string }> } | "";
    assert.ok(tags !== undefined, "XML document has a tags child");
    assert.ok(folders !== undefined, "XML document has a folders child");
    answer.document = {
      ...doc,
      tags: tags === "" ? [] : (tags.tag ?? []).map((t) => t.value),
      folders: folders === "" ? [] : (folders.folder ?? []).map((f) => f.id),
    };
  }
  return answer;
}

/** The answer read as JSON: `{"rsp":{"_content":…,"stat":…}}`. */
export function readJson(body: string): Answer {
  const parsed = JSON.parse(body) as { rsp: { stat: string; _content?: { error?: ErrorInfo; document?: Record<string, unknown> } } };
  assert.deepEqual(Object.keys(parsed), ["rsp"]);
  assert.deepEqual(Object.keys(parsed.rsp), ["_content", "stat"], "_content comes before stat");
  const answer: Answer = { stat: parsed.rsp.stat };
  const content = parsed.rsp._content ?? {};
  assert.equal(Object.keys(content).length, 1, "one payload object");
  if (content.error) answer.error = { ...content.error };
  if (content.document) answer.document = content.document;
  return answer;
}

export type Format = "xml" | "json";

/** Checks the transport of an API answer (200, no-store, content type) and reads it. */
export function readAnswer(res: RawResponse, format: Format): Answer {
  assert.equal(res.status, 200, "HTTP status is always 200");
  assert.equal(res.headers["cache-control"], "no-store");
  assert.equal(res.headers["content-type"], format === "xml" ? XML_TYPE : JSON_TYPE, `content type of ${res.body}`);
  return format === "xml" ? readXml(res.body) : readJson(res.body);
}

/** Asserts the exact failure: code (3-digit string), message of the spec, and field (or none). */
export function assertError(res: RawResponse, format: Format, code: string, field?: string): void {
  const answer = readAnswer(res, format);
  assert.equal(answer.stat, "fail", res.body);
  assert.ok(answer.error, `an error object in ${res.body}`);
  assert.equal(answer.error.code, code, res.body);
  assert.equal(answer.error.message, MESSAGES[code], res.body);
  if (field === undefined) assert.ok(!("field" in answer.error) || answer.error.field === undefined, `no field in ${res.body}`);
  else assert.equal(answer.error.field, field, res.body);
  assert.equal(answer.document, undefined);
}

/** Asserts success and answers the document. */
export function assertDocument(res: RawResponse, format: Format): Record<string, unknown> {
  const answer = readAnswer(res, format);
  assert.equal(answer.stat, "ok", res.body);
  assert.equal(answer.error, undefined);
  assert.ok(answer.document, `a document in ${res.body}`);
  return answer.document;
}

/** Sends one request that must fail exactly so, and checks that it stored nothing. */
export async function expectFailure(
  server: TestServer,
  send: () => Promise<RawResponse>,
  format: Format,
  code: string,
  field?: string,
): Promise<RawResponse> {
  const before = await server.countRecords();
  const res = await send();
  assertError(res, format, code, field);
  assert.deepEqual(await server.countRecords(), before, "a failing request leaves no record");
  return res;
}

/** Sends one request that must succeed, and checks that it stored one document and one job. */
export async function expectCreated(server: TestServer, send: () => Promise<RawResponse>, format: Format): Promise<Record<string, unknown>> {
  const before = await server.countRecords();
  const doc = assertDocument(await send(), format);
  assert.deepEqual(await server.countRecords(), { documents: before.documents + 1, jobs: before.jobs + 1 }, "one document and one job");
  return doc;
}

/** A signed url_upload that must be accepted: answers the document (one record and one job more). */
export function acceptedUrlUpload(server: TestServer, c: Caller, extra: Params, format: Format = "json"): Promise<Record<string, unknown>> {
  return expectCreated(server, () => postNormal(c, urlUpload(c, { format, ...extra })), format);
}

/** A signed url_upload that must be refused with 201 on `field`, storing nothing. */
export async function refusedUrlUpload(server: TestServer, c: Caller, extra: Params, field: string, format: Format = "json"): Promise<void> {
  await expectFailure(server, () => postNormal(c, urlUpload(c, { format, ...extra })), format, "201", field);
}
