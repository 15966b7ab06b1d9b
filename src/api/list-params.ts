import { invalid } from "../domain/errors.ts";
import { parseList } from "../domain/values.ts";
import { wholeNumber, type ParamGetter } from "../domain/document-options.ts";
import { checkOutputParams } from "./output-format.ts";
import type { RequestParams } from "./params.ts";
import type { Resource, ResultList } from "./payload.ts";

/** The paging window of every listing operation (decisions §8). */
export interface ListWindow {
  startIndex: number;
  /** 0 answers the counts alone. */
  pageSize: number;
}

export type ResultOrder = "asc" | "desc";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 10;

export function readResultOrder(get: ParamGetter): ResultOrder {
  const value = get("resultOrder") ?? "asc";
  if (value !== "asc" && value !== "desc") throw invalid("resultOrder");
  return value;
}

export function readStartIndex(get: ParamGetter): number {
  return wholeNumber(get, "startIndex", 0, 999_999_999) ?? 0;
}

export function readPageSize(get: ParamGetter): number {
  return wholeNumber(get, "pageSize", 0, MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE;
}

/** A sort field from the operation's own list, else 201 on the parameter. */
export function readSortBy<T extends string>(get: ParamGetter, field: string, allowed: readonly T[], fallback: T): T {
  const value = get(field);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw invalid(field);
  return value as T;
}

/** A list parameter whose every item must be one of `allowed`, else 201 on the parameter. */
export function readEnumList<T extends string>(get: ParamGetter, field: string, allowed: readonly T[]): T[] | undefined {
  const value = get(field);
  if (value === undefined) return undefined;
  const items = parseList(value);
  if (items.some((i) => !(allowed as readonly string[]).includes(i))) throw invalid(field);
  return items as T[];
}

/** `responseParams`: the names of the item's fields to keep; an unknown name is 201 (decisions §8). */
export function readResponseParams(get: ParamGetter, fieldNames: readonly string[]): ReadonlySet<string> | undefined {
  const value = get("responseParams");
  if (value === undefined) return undefined;
  const names = parseList(value);
  if (names.some((n) => !fieldNames.includes(n))) throw invalid("responseParams");
  return names.length > 0 ? new Set(names) : undefined;
}

/**
 * The end every listing table shares (decisions §8): the sort field, `resultOrder`, `startIndex`,
 * `pageSize`, `responseParams`, then `format`/`jsonCallback`, checked in that order.
 */
export function readListTail<T extends string>(
  params: RequestParams,
  sort: { field: string; allowed: readonly T[]; fallback: T },
  fieldNames: readonly string[],
): { sortBy: T; order: ResultOrder; window: ListWindow; keep: ReadonlySet<string> | undefined } {
  const get = params.get;
  const sortBy = readSortBy(get, sort.field, sort.allowed, sort.fallback);
  const order = readResultOrder(get);
  const window = { startIndex: readStartIndex(get), pageSize: readPageSize(get) };
  const keep = readResponseParams(get, fieldNames);
  checkOutputParams(params);
  return { sortBy, order, window, keep };
}

/** Keeps only the named fields of a resource (its field order stays as it is). */
export function project(resource: Resource, keep: ReadonlySet<string> | undefined): Resource {
  if (!keep) return resource;
  return { tag: resource.tag, fields: resource.fields.filter(([name]) => keep.has(name)) };
}

/** The `result` list of decisions §8; `more` is true when items follow this page. */
export function resultList(items: readonly Resource[], totalCount: number, window: ListWindow, keep: ReadonlySet<string> | undefined): ResultList {
  return {
    tag: "result",
    totalCount,
    startIndex: window.startIndex,
    pageSize: window.pageSize,
    more: window.startIndex + items.length < totalCount,
    items: items.map((i) => project(i, keep)),
  };
}

/** The field names a resource answers, for checking `responseParams`. */
export function fieldNamesOf(sample: Resource): string[] {
  return sample.fields.map(([name]) => name);
}

