import type { Resource } from "../domain/resource.ts";

/** What an operation answers, independent of the output format (resources: src/domain/resource.ts). */

export { isListField, type FieldValue, type ListField, type RecordListField, type Resource, type Scalar } from "../domain/resource.ts";

export interface ResultList {
  readonly tag: "result";
  readonly totalCount: number;
  readonly startIndex: number;
  readonly pageSize: number;
  readonly more: boolean;
  readonly items: readonly Resource[];
}

/** `svc.document_embed.get_html_code` answers the snippet itself, not an envelope (decisions §8). */
export interface RawHtml {
  readonly tag: "html";
  readonly html: string;
}

/** An operation answers one resource, a result list, raw HTML, or nothing (empty `ok`). */
export type Payload = Resource | ResultList | RawHtml | undefined;
