/**
 * What an answer holds, independent of the output format: the API's envelope writes it as XML or
 * JSON, and a webhook delivery carries the JSON form of a document (decisions §12). A resource's
 * simple fields are XML attributes / JSON members; list fields are `<tags><tag value=…/></tags>` /
 * arrays of strings.
 */
export type Scalar = string | number | boolean;

export interface ListField {
  readonly list: readonly string[];
  /** Child element name of each item in XML (`tag`, `folder`). */
  readonly itemTag: string;
  /** Attribute carrying the item's value in XML (`value`, `id`). */
  readonly itemAttr: string;
}

/** A list of small records: XML `<hits><hit page=… snippet=…/></hits>`, JSON an array of objects (`svc.documents.search`). */
export interface RecordListField {
  readonly records: ReadonlyArray<Readonly<Record<string, Scalar>>>;
  /** Child element name of each record in XML (`hit`); its fields are that element's attributes. */
  readonly itemTag: string;
}

export type FieldValue = Scalar | ListField | RecordListField;

export interface Resource {
  readonly tag: string;
  readonly fields: ReadonlyArray<readonly [string, FieldValue]>;
}

/** A list field of either kind (written as child elements in XML, arrays in JSON). */
export function isListField(v: FieldValue): v is ListField | RecordListField {
  return typeof v === "object";
}

/** The JSON members of a resource, as the API answers them inside `{"<tag>": …}`. */
export function resourceFieldsJson(r: Resource): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of r.fields) {
    body[name] = !isListField(value) ? value : "records" in value ? value.records.map((rec) => ({ ...rec })) : [...value.list];
  }
  return body;
}
