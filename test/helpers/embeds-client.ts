import assert from "node:assert/strict";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions } from "../../src/domain/document.ts";
import { getNormal, parseXml, readAnswer, sign, type Caller, type Format, type Params, type RawResponse } from "./api-conventions-client.ts";
import type { TestServer } from "./test-server.ts";

/** Messages exactly as decisions §9 and interface §7 write them. */
export const EMBED_MESSAGES: Record<string, string> = {
  "009": "Authentication required",
  "012": "Request throttled",
  "090": "Embed not found",
  "010": "Invalid API key",
  "011": "Bad signature",
  "200": "Required field is missing",
  "201": "Invalid field format",
  "300": "Document not found",
  "307": "Document still converting",
  "308": "Document failed conversion.",
  "311": "Page not found",
};

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

export async function accountIdOf(server: TestServer, apiKey: string): Promise<number> {
  const owner = await server.services.store.accounts.getKeyOwnerForSigning(apiKey);
  assert.ok(owner);
  return owner.accountId;
}

/**
 * A document put straight into the store, then (unless `state` is P) marked active with
 * `pageCount` pages or failed: no conversion is needed.
 */
export async function insertDocument(
  server: TestServer,
  c: Caller,
  opts: { state?: "P" | "A" | "F"; pageCount?: number; title?: string; name?: string } = {},
): Promise<{ documentId: string; name: string }> {
  const store = server.services.store;
  const owner = await store.accounts.getKeyOwnerForSigning(c.apiKey);
  assert.ok(owner);
  const now = Date.now();
  const doc = buildNewDocument(
    newDocumentIds(now),
    { accountId: owner.accountId, username: owner.username, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 10, blobId: newBlobId() },
    { ...OPTIONS, title: opts.title, name: opts.name },
    now,
  );
  await store.documents.insertWithJob(doc, "convert-document");
  const state = opts.state ?? "A";
  if (state === "A") {
    assert.ok(await store.documents.markActive(doc.documentId, { pageCount: opts.pageCount ?? 5, coverWidth: 0, coverHeight: 0, description: undefined, name: undefined }, now));
  } else if (state === "F") {
    assert.ok(await store.documents.markFailed(doc.documentId, 3, "The file is corrupt.", now));
  }
  return { documentId: doc.documentId, name: doc.name };
}

/** A signed GET of `svc.<action>` with `format` and the given parameters. */
export function call(c: Caller, action: string, params: Params, format: Format = "json"): Promise<RawResponse> {
  return getNormal(c, sign({ action: `svc.${action}`, apiKey: c.apiKey, format, ...params }, c.apiSecret));
}

/** Asserts the exact failure: code, message, field (or none). */
export function assertFail(res: RawResponse, format: Format, code: string, field?: string): void {
  const answer = readAnswer(res, format);
  assert.equal(answer.stat, "fail", res.body);
  assert.ok(answer.error, res.body);
  assert.equal(answer.error.code, code, res.body);
  assert.equal(answer.error.message, EMBED_MESSAGES[code], res.body);
  assert.equal(answer.error.field, field, res.body);
}

type Rsp = Record<string, unknown>;

/** The `rsp` of an ok answer, either format. */
export function okRsp(res: RawResponse, format: Format): Rsp {
  assert.equal(res.status, 200);
  assert.equal(res.headers["cache-control"], "no-store");
  if (format === "xml") {
    assert.equal(res.headers["content-type"], "text/xml; charset=utf-8");
    const rsp = parseXml(res.body).rsp as Rsp;
    assert.equal(rsp.stat, "ok", res.body);
    return rsp;
  }
  assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
  const parsed = JSON.parse(res.body) as { rsp: Rsp };
  assert.equal(parsed.rsp.stat, "ok", res.body);
  return parsed.rsp;
}

export interface Embed {
  id: number;
  dataConfigId: string;
  documentId: string;
  readerStartPage: number;
  width: number;
  height: number;
  created: string;
}

const INT_FIELDS = ["id", "readerStartPage", "width", "height"];

/** One `documentEmbed` answered, typed: XML attributes must be the decimal text of the numbers JSON answers. */
export function readEmbed(res: RawResponse, format: Format): Embed {
  const rsp = okRsp(res, format);
  if (format === "xml") {
    const e = rsp.documentEmbed as Record<string, string>;
    assert.ok(e, res.body);
    return xmlEmbed(e);
  }
  const content = rsp._content as { documentEmbed: Record<string, unknown> };
  assert.deepEqual(Object.keys(rsp), ["_content", "stat"]);
  assert.deepEqual(Object.keys(content), ["documentEmbed"]);
  const e = content.documentEmbed;
  assert.deepEqual(Object.keys(e), ["id", "dataConfigId", "documentId", "readerStartPage", "width", "height", "created"]);
  for (const f of INT_FIELDS) assert.ok(Number.isInteger(e[f]), `${f} is a JSON integer in ${res.body}`);
  return e as unknown as Embed;
}

function xmlEmbed(e: Record<string, string>): Embed {
  const out: Record<string, unknown> = { ...e };
  for (const f of INT_FIELDS) {
    if (e[f] === undefined) continue;
    assert.match(e[f], /^[1-9]\d*$/, f);
    out[f] = Number(e[f]);
  }
  return out as unknown as Embed;
}

export interface EmbedList {
  totalCount: number;
  startIndex: number;
  pageSize: number;
  more: boolean;
  items: Array<Record<string, unknown>>;
}

/** A `result` list of `documentEmbed`, typed alike in both formats. */
export function readList(res: RawResponse, format: Format): EmbedList {
  const rsp = okRsp(res, format);
  if (format === "xml") {
    const r = rsp.result as Record<string, unknown>;
    assert.ok(r !== undefined, res.body);
    const raw = r.documentEmbed;
    const items = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    assert.match(String(r.more), /^(true|false)$/);
    return {
      totalCount: Number(r.totalCount),
      startIndex: Number(r.startIndex),
      pageSize: Number(r.pageSize),
      more: r.more === "true",
      items: (items as Array<Record<string, string>>).map((i) => xmlEmbed(i) as unknown as Record<string, unknown>),
    };
  }
  const r = (rsp._content as { result: Record<string, unknown> }).result;
  assert.deepEqual(Object.keys(r), ["totalCount", "startIndex", "pageSize", "more", "_content"]);
  const content = r._content as Array<{ documentEmbed: Record<string, unknown> }>;
  for (const i of content) assert.deepEqual(Object.keys(i), ["documentEmbed"]);
  return {
    totalCount: r.totalCount as number,
    startIndex: r.startIndex as number,
    pageSize: r.pageSize as number,
    more: r.more as boolean,
    items: content.map((i) => i.documentEmbed),
  };
}
