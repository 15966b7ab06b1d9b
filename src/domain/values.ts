import { invalid } from "./errors.ts";

/** decisions §4: `true`/`false` in any case; anything else is 201 on the parameter. */
export function parseBoolean(field: string, value: string): boolean {
  const v = value.toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  throw invalid(field);
}

/** decisions §4: comma-separated, items trimmed, empty items dropped, duplicates removed keeping the first. */
export function parseList(value: string): string[] {
  const seen = new Set<string>();
  for (const raw of value.split(",")) {
    const item = raw.trim();
    if (item !== "") seen.add(item);
  }
  return [...seen];
}

const DATE_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/**
 * decisions §4: ISO 8601 with a time zone, or a date alone taken as midnight UTC.
 * Returns epoch milliseconds; impossible dates (2009-02-30, 25:00) are 201.
 */
export function parseDate(field: string, value: string): number {
  const m = DATE_RE.exec(value);
  if (!m) throw invalid(field);
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone = "Z"] = m;
  const year = Number(y), month = Number(mo), day = Number(d);
  const hour = Number(h), minute = Number(mi), second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) throw invalid(field);
  if (hour > 23 || minute > 59 || second > 59) throw invalid(field);
  let offsetMinutes = 0;
  if (zone !== "Z") {
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2)), om = Number(digits.slice(2));
    if (oh > 14 || om > 59) throw invalid(field);
    offsetMinutes = (zone.startsWith("-") ? -1 : 1) * (oh * 60 + om);
  }
  const ms = Number((frac + "000").slice(0, 3));
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  // Date.UTC maps years 0-99 to 1900-1999; four-digit years below 1000 are not worth that trap.
  if (year < 1000 || !Number.isFinite(utc)) throw invalid(field);
  return utc;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Output form of every date: UTC with milliseconds (decisions §4). */
export function formatDate(ms: number): string {
  return new Date(ms).toISOString();
}

/** decisions §4: absolute http/https URLs of at most 2048 characters. */
export function parseHttpUrl(field: string, value: string): URL {
  // The URL parser would quietly strip tabs, newlines and edge spaces; a value carrying them is malformed.
  // "at most 2048 characters": counted as code points, not UTF-16 units (an astral character is one).
  // eslint-disable-next-line no-control-regex
  if (charLength(value) > 2048 || /[\u0000-\u0020\u007F]/.test(value)) throw invalid(field);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") throw invalid(field);
  return url;
}

const NAME_RE = /^[a-z0-9_.-]{3,50}$/;
export function isValidDocumentName(value: string): boolean {
  return NAME_RE.test(value);
}

const USERNAME_RE = /^[a-z0-9_.-]{3,30}$/;
export function isValidUsername(value: string): boolean {
  return USERNAME_RE.test(value);
}

/** Characters XML 1.0 cannot carry (C0 controls but tab/LF/CR, U+FFFE, U+FFFF): such text cannot be answered faithfully. */
// eslint-disable-next-line no-control-regex
const NOT_XML_SAFE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
export function isXmlSafe(value: string): boolean {
  return !NOT_XML_SAFE.test(value);
}

/** Length as a person counts it (code points), not UTF-16 units. */
export function charLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}
