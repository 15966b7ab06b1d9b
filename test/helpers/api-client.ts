import assert from "node:assert/strict";
import { assertDocument, assertError, readList, type Format, type ListAnswer } from "./api-answers.ts";
import { independentSignature } from "./independent-sign.ts";
import { rawHttp, type RawResponse } from "../../src/client/raw-http.ts";
import type { TestServer } from "./test-server.ts";

/**
 * The API tests' client: requests written byte for byte through the client's raw-bytes hatch
 * (src/client/raw-http.ts), signed calls of `svc.*` actions, and sends that must store exactly one
 * record or none. Signatures come from independent-sign.ts only (an implementation apart from the
 * server's, so a shared mistake cannot pass); answers are read by api-answers.ts, the one reader
 * of the envelope.
 */

export const FORM = "application/x-www-form-urlencoded";
export const URL_UPLOAD = "svc.document.url_upload";
export const SLURP = "https://example.com/a/report.pdf";

export { rawHttp, type RawRequest, type RawResponse } from "../../src/client/raw-http.ts";

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

/** A signed call of `svc.<action>` on the normal endpoint; GET, or form-encoded POST with `post`. */
export function call(c: Caller, action: string, params: Params = {}, format: Format = "json", post = false): Promise<RawResponse> {
  const signed = sign({ action: `svc.${action}`, apiKey: c.apiKey, format, ...params }, c.apiSecret);
  return post ? postNormal(c, signed) : getNormal(c, signed);
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

/** Lists with these parameters and answers the result. */
export async function list(c: Caller, params: Params = {}, format: Format = "json"): Promise<ListAnswer> {
  return readList(await call(c, "documents.list", params, format), format);
}

/** Asserts the call fails with this code and field. */
export async function refused(c: Caller, action: string, params: Params, code: string, field: string | undefined, format: Format = "json"): Promise<void> {
  assertError(await call(c, action, params, format), format, code, field);
}
