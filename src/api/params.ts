import { invalid, QuireError } from "../domain/errors.ts";
import { decodeUtf8 } from "../uploads/utf8.ts";

/**
 * The request's parameters from every place they may come from. A name given twice (in one
 * place or across places) is 201 on that name. Values keep empty strings: they count for the
 * signature, while `get` treats them as absent (decisions §4).
 */
export class RequestParams {
  private readonly values = new Map<string, string>();

  add(name: string, value: string): void {
    if (this.values.has(name)) throw invalid(name);
    this.values.set(name, value);
  }

  /** The value as sent, empty included. */
  raw(name: string): string | undefined {
    return this.values.get(name);
  }

  /** The value as the operation sees it: empty counts as absent. Callers pass it around unbound. */
  readonly get: (name: string) => string | undefined;

  constructor() {
    const values = this.values;
    // Assigned here rather than as an arrow-function field: the runner (tsx, with esbuild's
    // keepNames) names each such arrow as it is made, which cost more than the rest of parsing.
    this.get = function (name) {
      const v = values.get(name);
      return v === "" ? undefined : v;
    };
  }

  /** A copy as it stands now; later additions do not reach it. */
  snapshot(): RequestParams {
    const copy = new RequestParams();
    for (const [k, v] of this.values) copy.values.set(k, v);
    return copy;
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  entries(): IterableIterator<[string, string]> {
    return this.values.entries();
  }
}

/**
 * Reads `a=1&b=2` (query string or form body) given as raw bytes, `+` as space, `%XY` as a byte.
 * Names and values must be UTF-8 after decoding; a stray `%` is kept as it is, as browsers do.
 * Every pair is read even after a bad one, so that `format` is known wherever it stands and the
 * failure is answered in the format asked for; the first failure is thrown at the end.
 */
export function addFormEncoded(params: RequestParams, raw: Buffer): void {
  let failure: QuireError | undefined;
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf(0x26 /* & */, start);
    if (end === -1) end = raw.length;
    if (end > start) {
      const pair = raw.subarray(start, end);
      const eq = pair.indexOf(0x3d /* = */);
      const nameBytes = percentDecode(eq === -1 ? pair : pair.subarray(0, eq));
      const valueBytes = percentDecode(eq === -1 ? Buffer.alloc(0) : pair.subarray(eq + 1));
      try {
        const name = decodeUtf8(nameBytes, () => Buffer.from(nameBytes).toString("utf8"));
        params.add(name, decodeUtf8(valueBytes, name));
      } catch (err) {
        if (!(err instanceof QuireError)) throw err;
        failure ??= err;
      }
    }
    start = end + 1;
  }
  if (failure) throw failure;
}

/** Whether the text holds what only the byte-level reader decodes: escapes, `+`, any byte beyond ASCII. */
function needsDecoding(text: string): boolean {
  // A loop: V8's regular expression for this character class took three times as long.
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25 /* % */ || c === 0x2b /* + */ || c > 0x7f) return true;
  }
  return false;
}

/**
 * A query string as Node hands it over (latin1: one character per byte of the request line).
 * Nearly every one is plain ASCII without an escape, which reads the same as text; only the rest
 * are turned into bytes for addFormEncoded.
 */
export function addQueryString(params: RequestParams, query: string): void {
  if (needsDecoding(query)) return addFormEncoded(params, Buffer.from(query, "latin1"));
  let failure: QuireError | undefined;
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    try {
      params.add(eq === -1 ? pair : pair.slice(0, eq), eq === -1 ? "" : pair.slice(eq + 1));
    } catch (err) {
      if (!(err instanceof QuireError)) throw err;
      failure ??= err;
    }
  }
  if (failure) throw failure;
}

function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function percentDecode(input: Buffer): Buffer {
  if (input.indexOf(0x25) === -1 && input.indexOf(0x2b) === -1) return input;
  const out = Buffer.allocUnsafe(input.length);
  let j = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === 0x2b) {
      out[j++] = 0x20;
    } else if (c === 0x25) {
      const hi = hexValue(input[i + 1]), lo = hexValue(input[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out[j++] = hi * 16 + lo;
        i += 2;
      } else {
        out[j++] = c;
      }
    } else {
      out[j++] = c;
    }
  }
  return out.subarray(0, j);
}

/** Parses `type/subtype; a=b` into its lowercased type and parameters. */
export function parseContentType(header: string): { type: string; params: Map<string, string> } {
  const [type = "", ...rest] = header.split(";");
  const params = new Map<string, string>();
  for (const part of rest) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
    params.set(key, value);
  }
  return { type: type.trim().toLowerCase(), params };
}

/** A charset other than UTF-8 is 201 (decisions §1); no parameter is to blame, so no field. */
export function assertUtf8Charset(contentType: { params: Map<string, string> }): void {
  const charset = contentType.params.get("charset");
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) throw new QuireError("201");
}
