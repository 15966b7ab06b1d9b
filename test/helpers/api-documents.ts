import assert from "node:assert/strict";
import { XMLParser } from "fast-xml-parser";
import { createAccount } from "../../src/cli/accounts-command.ts";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions, type DocumentRecord } from "../../src/domain/document.ts";
import { toRow } from "../../src/store/documents.ts";
import {
  assertError, getNormal, parseXml, postNormal, readAnswer, sign, type Caller, type Format, type Params, type RawResponse,
} from "./api-conventions-client.ts";
import type { TestServer } from "./test-server.ts";

/** Helpers of the api-documents tests: signed calls of the account operations, result lists read in both formats. */

export const FORMATS = ["xml", "json"] as const;

/** A signed call of `svc.<action>` on the normal endpoint; GET, or form-encoded POST with `post`. */
export function call(c: Caller, action: string, params: Params = {}, format: Format = "json", post = false): Promise<RawResponse> {
  const signed = sign({ action: `svc.${action}`, apiKey: c.apiKey, format, ...params }, c.apiSecret);
  return post ? postNormal(c, signed) : getNormal(c, signed);
}

/** A second account on the same server, as a caller. */
export async function otherCaller(server: TestServer, username: string): Promise<Caller & { accountId: number }> {
  const creds = await createAccount(server.services.store, username);
  const owner = await server.services.store.accounts.getKeyOwnerForSigning(creds.apiKey);
  assert.ok(owner);
  return { server, apiKey: creds.apiKey, apiSecret: creds.apiSecret, accountId: owner.accountId };
}

export async function accountIdOf(server: TestServer, c: Caller): Promise<number> {
  const owner = await server.services.store.accounts.getKeyOwnerForSigning(c.apiKey);
  assert.ok(owner);
  return owner.accountId;
}

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

let seq = 0;
/** A record written straight into the store (no job), any field set as the test needs. */
export async function seedDoc(
  server: TestServer,
  owner: { accountId: number; username: string },
  fields: Partial<DocumentRecord> = {},
): Promise<DocumentRecord> {
  const now = Date.now();
  const ids = newDocumentIds(now);
  // distinct, increasing ids even within one second
  ids.publicationId = (seq++).toString(16).padStart(8, "0") + ids.publicationId.slice(8);
  ids.documentId = `${ids.revisionId}-${ids.publicationId}`;
  const base = buildNewDocument(
    ids,
    { ...owner, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    OPTIONS,
    now,
  );
  const doc = { ...base, ...fields };
  await server.services.store.db.insertInto("documents").values(toRow(doc)).execute();
  return doc;
}

export interface ListAnswer {
  totalCount: number;
  startIndex: number;
  pageSize: number;
  more: boolean;
  /** Each document's fields; XML values are strings, tags/folders lists in both. */
  docs: Array<Record<string, unknown>>;
}

const listXml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: false,
  htmlEntities: true,
  isArray: (name) => name === "document" || name === "tag" || name === "folder",
});

/** Reads a successful `result` list answer, checking its exact shape in each format (decisions §8). */
export function readList(res: RawResponse, format: Format): ListAnswer {
  const answer = readAnswer(res, format);
  assert.equal(answer.stat, "ok", res.body);
  if (format === "json") {
    const parsed = JSON.parse(res.body) as { rsp: { _content: { result: Record<string, unknown> } } };
    assert.deepEqual(Object.keys(parsed.rsp._content), ["result"]);
    const r = parsed.rsp._content.result;
    assert.deepEqual(Object.keys(r), ["totalCount", "startIndex", "pageSize", "more", "_content"]);
    assert.ok(Array.isArray(r._content), "_content is an array");
    for (const k of ["totalCount", "startIndex", "pageSize"]) assert.equal(typeof r[k], "number");
    assert.equal(typeof r.more, "boolean");
    const docs = (r._content as Array<Record<string, unknown>>).map((item) => {
      assert.deepEqual(Object.keys(item), ["document"]);
      return item.document as Record<string, unknown>;
    });
    return { totalCount: r.totalCount as number, startIndex: r.startIndex as number, pageSize: r.pageSize as number, more: r.more as boolean, docs };
  }
  parseXml(res.body); // well-formed, only XML characters
  const rsp = (listXml.parse(res.body) as { rsp: Record<string, unknown> }).rsp;
  const result = rsp.result as Record<string, unknown>;
  assert.ok(result, `a result element in ${res.body}`);
  assert.match(res.body, /<rsp stat="ok"><result totalCount="\d+" startIndex="\d+" pageSize="\d+" more="(true|false)"(\/>|>)/);
  const children = Object.keys(result).filter((k) => !["totalCount", "startIndex", "pageSize", "more"].includes(k));
  assert.ok(children.every((k) => k === "document"), `only document children: ${children.join()}`);
  const docs = ((result.document as Array<Record<string, unknown>> | undefined) ?? []).map((d) => {
    // attributes first, then the list children, as the document is written
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(d)) if (k !== "tags" && k !== "folders") out[k] = v;
    if ("tags" in d) out.tags = d.tags === "" ? [] : ((d.tags as { tag?: Array<{ value: string }> }).tag ?? []).map((t) => t.value);
    if ("folders" in d) out.folders = d.folders === "" ? [] : ((d.folders as { folder?: Array<{ id: string }> }).folder ?? []).map((f) => f.id);
    return out;
  });
  return {
    totalCount: Number(result.totalCount),
    startIndex: Number(result.startIndex),
    pageSize: Number(result.pageSize),
    more: result.more === "true",
    docs,
  };
}

/** Lists with these parameters and answers the result. */
export async function list(c: Caller, params: Params = {}, format: Format = "json"): Promise<ListAnswer> {
  return readList(await call(c, "documents.list", params, format), format);
}

/** Asserts the call fails with this code and field. */
export async function refused(c: Caller, action: string, params: Params, code: string, field: string | undefined, format: Format = "json"): Promise<void> {
  assertError(await call(c, action, params, format), format, code, field);
}

/** Asserts an empty ok (`<rsp stat="ok"/>` / `{"rsp":{"stat":"ok"}}`). */
export function assertEmptyOk(res: RawResponse, format: Format): void {
  assert.equal(res.status, 200);
  assert.equal(res.headers["cache-control"], "no-store");
  if (format === "json") assert.equal(res.body, '{"rsp":{"stat":"ok"}}');
  else assert.equal(res.body, '<?xml version="1.0" encoding="UTF-8"?><rsp stat="ok"/>');
}

/** Asserts error 300 "Document not found" (decisions §9), no field, in either format. */
export function assertNotFound(res: RawResponse, format: Format): void {
  const answer = readAnswer(res, format);
  assert.equal(answer.stat, "fail", res.body);
  assert.equal(answer.error?.code, "300", res.body);
  assert.equal(answer.error.message, "Document not found", res.body);
  assert.equal(answer.error.field, undefined, `no field in ${res.body}`);
  if (format === "json") assert.doesNotMatch(res.body, /"field"/);
}
