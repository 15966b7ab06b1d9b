import { randomBytes } from "node:crypto";
import { rawHttp } from "../../src/client/raw-http.ts";
import { readJson, readXml } from "./api-answers.ts";
import { signParams } from "./independent-sign.ts";

/**
 * Multipart bodies built by hand, so tests control part order and every byte (file names that
 * are not UTF-8, odd parts), posted through the client's raw-bytes hatch (src/client/raw-http.ts)
 * and read by the one envelope reader (api-answers.ts).
 */

/** A plain field part. */
export interface FieldPart {
  name: string | Buffer;
  value: string | Buffer;
}

/** A file part; `filename` and `name` may be raw bytes. */
export interface FilePart {
  name: string | Buffer;
  filename: string | Buffer;
  data: Buffer;
  contentType?: string;
}

export type Part = FieldPart | FilePart;

export const newBoundary = (): string => `----quiretest${randomBytes(12).toString("hex")}`;

const bytes = (v: string | Buffer): Buffer => (typeof v === "string" ? Buffer.from(v, "utf8") : v);

/** The part's boundary line and headers, up to and including the blank line before its data. */
export function partHead(boundary: string, part: FieldPart | Omit<FilePart, "data">): Buffer {
  const pieces: Buffer[] = [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="`), bytes(part.name), Buffer.from('"')];
  if ("filename" in part) {
    pieces.push(Buffer.from('; filename="'), bytes(part.filename), Buffer.from('"\r\n'));
    pieces.push(Buffer.from(`Content-Type: ${part.contentType ?? "application/octet-stream"}\r\n`));
  } else {
    pieces.push(Buffer.from("\r\n"));
  }
  pieces.push(Buffer.from("\r\n"));
  return Buffer.concat(pieces);
}

/** What ends the body after the last part's data. */
export const closing = (boundary: string): Buffer => Buffer.from(`\r\n--${boundary}--\r\n`);

/** A whole multipart body; each part's data is followed by CRLF and the next boundary. */
export function multipartBody(boundary: string, parts: Part[]): Buffer {
  if (parts.length === 0) return Buffer.from(`--${boundary}--\r\n`);
  const pieces: Buffer[] = [];
  parts.forEach((part, i) => {
    if (i > 0) pieces.push(Buffer.from("\r\n"));
    pieces.push(partHead(boundary, part), "data" in part ? part.data : bytes(part.value));
  });
  pieces.push(closing(boundary));
  return Buffer.concat(pieces);
}

/** Field parts for these parameters, in the given order. */
export const fields = (params: Record<string, string>): FieldPart[] => Object.entries(params).map(([name, value]) => ({ name, value }));

export const fileField = (data: Buffer, filename: string | Buffer, name: string | Buffer = "file"): FilePart => ({ name, filename, data });

/** The account's parameters for an upload, signed with the independent signer. */
export function signedUpload(account: { apiKey: string; apiSecret: string }, extra: Record<string, string> = {}): Record<string, string> {
  return signParams(account.apiSecret, { apiKey: account.apiKey, action: "svc.document.upload", ...extra });
}

export interface HttpAnswer {
  status: number;
  /** Header names lowercased; a repeated header's values joined by ", ". */
  headers: Record<string, string>;
  text: string;
}

/** How long a test waits for an answer before calling it a hang (a guard, not a timing assertion). */
export const HANG_GUARD_MS = 10_000;

/**
 * POSTs raw bytes through the client's raw-bytes hatch and answers status, headers and body text.
 * Content-Length is the body's unless `headers` gives another (a lying length is a test's to send).
 */
export async function postRaw(url: string, headers: Record<string, string | number>, body: Buffer): Promise<HttpAnswer> {
  const target = new URL(url);
  const all: Record<string, string> = { "content-length": String(body.length) };
  for (const [name, value] of Object.entries(headers)) all[name.toLowerCase()] = String(value);
  const res = await rawHttp(target.origin, { method: "POST", path: target.pathname + target.search, headers: Object.entries(all), body, timeoutMs: HANG_GUARD_MS });
  return { status: res.status, headers: res.headers, text: res.body };
}

/** POSTs these parts as multipart/form-data to `url` (query string included in `url` if any). */
export function postMultipart(url: string, parts: Part[], contentType?: string): Promise<HttpAnswer> {
  const boundary = newBoundary();
  return postRaw(url, { "content-type": contentType ?? `multipart/form-data; boundary=${boundary}` }, multipartBody(boundary, parts));
}

/** The envelope, the same shape whatever the format. `document` keeps XML's strings / JSON's numbers. */
export interface Rsp {
  stat: string;
  error?: { code: string; message: string; field?: string };
  document?: Record<string, unknown> & { tags: string[]; folders: string[] };
}

/**
 * Reads an API answer in XML (`format` absent or `xml`) or JSON with api-answers.ts, the one reader
 * of the envelope (which also checks it is well-formed and in the spec's shape).
 */
export function parseRsp(answer: { text: string; status?: number; headers?: unknown }, format: "xml" | "json" = "xml"): Rsp {
  const read = format === "json" ? readJson(answer.text) : readXml(answer.text);
  const out: Rsp = { stat: read.stat };
  if (read.error) out.error = read.error.field === undefined ? { code: read.error.code, message: read.error.message } : read.error;
  if (read.document) out.document = read.document as Rsp["document"];
  return out;
}

/** The error of a failed answer as `code/field` (field `-` when absent), for short assertions. */
export function failure(rsp: Rsp): string {
  if (rsp.stat !== "fail" || rsp.error === undefined) return `not a failure: ${JSON.stringify(rsp)}`;
  return `${rsp.error.code}/${rsp.error.field ?? "-"}`;
}

/**
 * Files in the blob folder that were not in `before`. A refused upload's spool file is removed
 * just after the answer is sent, so new files get `graceMs` to disappear before they count.
 */
export async function newBlobFiles(list: () => Promise<string[]>, before: readonly string[], graceMs = 2000): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const added = (await list()).filter((f) => !before.includes(f));
    if (added.length === 0 || Date.now() > deadline) return added;
    await new Promise((r) => setTimeout(r, 20));
  }
}
