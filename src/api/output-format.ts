import { invalid } from "../domain/errors.ts";
import type { OutputFormat } from "./envelope.ts";
import type { RequestParams } from "./params.ts";

const CALLBACK_RE = /^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$/;
export const MAX_CALLBACK_LENGTH = 128;

export function isValidCallback(value: string): boolean {
  return value.length <= MAX_CALLBACK_LENGTH && CALLBACK_RE.test(value);
}

/**
 * The format to answer in, before the request is judged: an invalid `format` answers in XML,
 * an invalid callback answers plain JSON, so an error is never wrapped in an unchecked name.
 */
export function outputFormatOf(params: RequestParams): OutputFormat {
  if (params.get("format") !== "json") return { kind: "xml" };
  const cb = params.get("jsonCallback");
  return { kind: "json", callback: cb !== undefined && isValidCallback(cb) ? cb : undefined };
}

/** `format` and `jsonCallback` close every operation's table (decisions §2 step 6). */
export function checkOutputParams(params: RequestParams): void {
  const format = params.get("format");
  if (format !== undefined && format !== "xml" && format !== "json") throw invalid("format");
  const cb = params.get("jsonCallback");
  if (cb !== undefined && !isValidCallback(cb)) throw invalid("jsonCallback");
}
