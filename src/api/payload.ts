/**
 * What an operation answers, independent of the output format. A resource's simple fields are
 * XML attributes / JSON members; list fields are `<tags><tag value=…/></tags>` / arrays of strings.
 */
export type Scalar = string | number | boolean;

export interface ListField {
  readonly list: readonly string[];
  /** Child element name of each item in XML (`tag`, `folder`). */
  readonly itemTag: string;
  /** Attribute carrying the item's value in XML (`value`, `id`). */
  readonly itemAttr: string;
}

export type FieldValue = Scalar | ListField;

export interface Resource {
  readonly tag: string;
  readonly fields: ReadonlyArray<readonly [string, FieldValue]>;
}

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

export function isListField(v: FieldValue): v is ListField {
  return typeof v === "object";
}
