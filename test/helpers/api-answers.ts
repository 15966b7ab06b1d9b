import assert from "node:assert/strict";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import type { RawResponse } from "../../src/client/raw-http.ts";
import { ERROR_MESSAGES } from "../../src/domain/errors.ts";

/**
 * The API tests' one reader of the envelope: both formats (and JSONP) read into one shape,
 * failures checked exactly; `envelopeProblem` is the same reader answering what is wrong instead
 * of asserting (the fuzz tests).
 */

/** Messages exactly as the interface document §7 and decisions §9 write them. */
export const MESSAGES: Record<string, string> = {
  "009": "Authentication required",
  "010": "Invalid API key",
  "011": "Bad signature",
  "012": "Request throttled",
  "090": "Embed not found",
  "200": "Required field is missing",
  "201": "Invalid field format",
  "300": "Document not found",
  "307": "Document still converting",
  "308": "Document failed conversion.",
  "311": "Page not found",
};

export const XML_TYPE = "text/xml; charset=utf-8";
export const JSON_TYPE = "application/json; charset=utf-8";
export const JSONP_TYPE = "application/javascript; charset=utf-8";
export const FORMATS = ["xml", "json"] as const;

export type Format = "xml" | "json";

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

/** A reader of the envelope whose elements named in `lists` are always read as lists (one or many). */
const parserWithLists = (lists: readonly string[]) =>
  new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    // decodes character references (&#10;) as any XML parser does
    htmlEntities: true,
    isArray: (name) => lists.includes(name),
  });
const xmlParser = parserWithLists(["tag", "folder"]);
const listParsers = new Map<string, XMLParser>();

/** Characters XML 1.0 cannot carry at all, which the validator does not look for. */
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

/**
 * Checks the XML is well formed and carries only what XML 1.0 allows, then reads it; elements named
 * in `lists` (default: a document's tags and folders) are lists however many there are.
 */
export function parseXml(body: string, lists?: readonly string[]): Record<string, unknown> {
  assert.equal(XMLValidator.validate(body), true, `well-formed XML: ${body}`);
  assert.doesNotMatch(body, NOT_XML_CHAR, "only characters XML 1.0 allows");
  // A conforming parser turns a raw tab, LF or CR inside an attribute value into a space; only
  // character references survive it, so none may appear raw there.
  for (const m of body.matchAll(/="([^"]*)"/g)) assert.doesNotMatch(m[1]!, /[\t\n\r]/, `raw whitespace in attribute ${m[0]}`);
  if (!lists) return xmlParser.parse(body) as Record<string, unknown>;
  const key = lists.join(" ");
  let parser = listParsers.get(key);
  if (!parser) listParsers.set(key, (parser = parserWithLists(lists)));
  return parser.parse(body) as Record<string, unknown>;
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
  // An empty ok is `{"rsp":{"stat":"ok"}}`; any other answer has one payload object, before stat.
  const empty = parsed.rsp._content === undefined && parsed.rsp.stat === "ok";
  assert.deepEqual(Object.keys(parsed.rsp), empty ? ["stat"] : ["_content", "stat"], "_content comes before stat");
  const answer: Answer = { stat: parsed.rsp.stat };
  const content = parsed.rsp._content ?? {};
  if (!empty) assert.equal(Object.keys(content).length, 1, "one payload object");
  if (content.error) answer.error = { ...content.error };
  if (content.document) answer.document = content.document;
  return answer;
}

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

export interface ListAnswer {
  totalCount: number;
  startIndex: number;
  pageSize: number;
  more: boolean;
  /** Each document's fields; XML values are strings, tags/folders lists in both. */
  docs: Array<Record<string, unknown>>;
}

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
  const rsp = (parseXml(res.body, ["document", "tag", "folder"]) as { rsp: Record<string, unknown> }).rsp;
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

type Rsp = Record<string, unknown>;

/** The `rsp` of an ok answer, either format. */
export function okRsp(res: RawResponse, format: Format): Rsp {
  assert.equal(res.status, 200);
  assert.equal(res.headers["cache-control"], "no-store");
  if (format === "xml") {
    assert.equal(res.headers["content-type"], XML_TYPE);
    const rsp = parseXml(res.body).rsp as Rsp;
    assert.equal(rsp.stat, "ok", res.body);
    return rsp;
  }
  assert.equal(res.headers["content-type"], JSON_TYPE);
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
export function readEmbedList(res: RawResponse, format: Format): EmbedList {
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

/** An answer as the fuzz tests saw it. */
export interface AnswerSeen {
  status: number;
  contentType: string;
  text: string;
}

const JSONP_RE = /^([A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*)\(([\s\S]*)\)$/;

/**
 * What any API answer must be, read by the reader above: a well-formed envelope, stat ok or fail,
 * a fail with a catalogued code (never 500) and its exact message. Answers what is wrong, or
 * undefined when nothing is.
 */
export function envelopeProblem(a: AnswerSeen): string | undefined {
  if (a.status !== 200) return `HTTP ${a.status}`;
  const type = a.contentType.split(";")[0]!.trim();
  // get_html_code answers HTML whatever the format; nothing else may.
  if (type === "text/html") return /^<iframe [^<>]*><\/iframe>$/.test(a.text) ? undefined : "HTML that is not one iframe";
  let answer: Answer;
  try {
    if (type === "text/xml") answer = readXml(a.text);
    else if (type === "application/json") answer = readJson(a.text);
    else if (type === "application/javascript") {
      const m = JSONP_RE.exec(a.text);
      if (!m) return "JSONP not of the form callback(json)";
      answer = readJson(m[2]!);
    } else return `content type ${a.contentType}`;
  } catch (err) {
    return `not a well-formed envelope: ${(err as Error).message.split("\n")[0]}`;
  }
  if (answer.stat === "ok") return answer.error === undefined ? undefined : "ok with an error";
  if (answer.stat !== "fail") return `stat ${answer.stat}`;
  const code = String(answer.error?.code) as keyof typeof ERROR_MESSAGES;
  if (!(code in ERROR_MESSAGES)) return `code ${code} not in the catalogue`;
  if (code === "500") return "code 500";
  if (answer.error?.message !== ERROR_MESSAGES[code]) return `message ${String(answer.error?.message)} for ${code}`;
  return undefined;
}
