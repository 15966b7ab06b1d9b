import { isAscii } from "node:buffer";
import { invalid } from "../domain/errors.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes bytes as UTF-8 or fails with 201 on `field` (interface §4.1, decisions §1); `field` may
 * be given as a function, called only on failure.
 */
export function decodeUtf8(bytes: Uint8Array, field: string | (() => string)): string {
  // Nearly every parameter is ASCII, which is valid UTF-8 as it stands: no validating decoder needed.
  if (isAscii(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalid(typeof field === "function" ? field() : field);
  }
}
