import { create } from "xmlbuilder2";
import type { XMLBuilder } from "xmlbuilder2/lib/interfaces.js";
import { ERROR_MESSAGES, type QuireError } from "../domain/errors.ts";
import { resourceFieldsJson } from "../domain/resource.ts";
import { isListField, type Payload, type RawHtml, type Resource, type ResultList } from "./payload.ts";

export type OutputFormat = { readonly kind: "xml" } | { readonly kind: "json"; readonly callback: string | undefined };

export interface Rendered {
  readonly contentType: string;
  readonly body: string;
}

export const XML_TYPE = "text/xml; charset=utf-8";
export const JSON_TYPE = "application/json; charset=utf-8";
export const JSONP_TYPE = "application/javascript; charset=utf-8";

export const HTML_TYPE = "text/html; charset=utf-8";

export function renderOk(format: OutputFormat, payload: Payload): Rendered {
  if (payload?.tag === "html") return { contentType: HTML_TYPE, body: (payload as RawHtml).html };
  if (format.kind === "xml") {
    const rsp = create({ version: "1.0", encoding: "UTF-8" }).ele("rsp", { stat: "ok" });
    if (payload) appendXml(rsp, payload as Resource | ResultList);
    return { contentType: XML_TYPE, body: serialize(rsp) };
  }
  const rsp = payload ? { _content: toJson(payload as Resource | ResultList), stat: "ok" } : { stat: "ok" };
  return renderJson(format.callback, rsp);
}

export function renderError(format: OutputFormat, error: QuireError): Rendered {
  const attrs: Record<string, string> = { code: error.code, message: ERROR_MESSAGES[error.code] };
  if (error.field !== undefined) attrs.field = error.field;
  if (format.kind === "xml") {
    const rsp = create({ version: "1.0", encoding: "UTF-8" }).ele("rsp", { stat: "fail" });
    rsp.ele("error", attrs);
    return { contentType: XML_TYPE, body: serialize(rsp) };
  }
  return renderJson(format.callback, { _content: { error: attrs }, stat: "fail" });
}

function renderJson(callback: string | undefined, rsp: object): Rendered {
  const json = JSON.stringify({ rsp });
  // The callback was checked against the identifier-path rule before it got here.
  if (callback !== undefined) return { contentType: JSONP_TYPE, body: `${callback}(${json})` };
  return { contentType: JSON_TYPE, body: json };
}

/**
 * xmlbuilder2 writes tab, LF and CR inside attribute values as they are, and a parser would
 * normalise them to spaces. Every value we write is an attribute and nothing is pretty-printed,
 * so any such character in the output sits inside an attribute and is replaced by its reference.
 */
function serialize(root: XMLBuilder): string {
  return root.end({ prettyPrint: false }).replace(/[\t\n\r]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function appendXml(parent: XMLBuilder, payload: Resource | ResultList): void {
  if (payload.tag === "result" && "items" in payload) {
    const result = parent.ele("result", {
      totalCount: String(payload.totalCount),
      startIndex: String(payload.startIndex),
      pageSize: String(payload.pageSize),
      more: String(payload.more),
    });
    for (const item of payload.items) appendResource(result, item);
    return;
  }
  appendResource(parent, payload as Resource);
}

function appendResource(parent: XMLBuilder, r: Resource): void {
  const attrs: Record<string, string> = {};
  for (const [name, value] of r.fields) if (!isListField(value)) attrs[name] = String(value);
  const el = parent.ele(r.tag, attrs);
  for (const [name, value] of r.fields) {
    if (!isListField(value)) continue;
    const list = el.ele(name);
    if ("records" in value) {
      for (const record of value.records) list.ele(value.itemTag, Object.fromEntries(Object.entries(record).map(([k, v]) => [k, String(v)])));
    } else {
      for (const item of value.list) list.ele(value.itemTag, { [value.itemAttr]: item });
    }
  }
}

function toJson(payload: Resource | ResultList): object {
  if (payload.tag === "result" && "items" in payload) {
    return {
      result: {
        totalCount: payload.totalCount,
        startIndex: payload.startIndex,
        pageSize: payload.pageSize,
        more: payload.more,
        _content: payload.items.map(resourceJson),
      },
    };
  }
  return resourceJson(payload as Resource);
}

function resourceJson(r: Resource): object {
  return { [r.tag]: resourceFieldsJson(r) };
}
