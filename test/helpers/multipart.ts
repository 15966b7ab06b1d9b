import { randomBytes } from "node:crypto";
import { request, type IncomingHttpHeaders } from "node:http";
import { XMLParser } from "fast-xml-parser";
import { signParams } from "./independent-sign.ts";

/**
 * Multipart bodies built by hand, so tests control part order and every byte (file names that
 * are not UTF-8, odd parts), and a small node:http client that answers whatever the server says.
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
  headers: IncomingHttpHeaders;
  text: string;
}

/** How long a test waits for an answer before calling it a hang (a guard, not a timing assertion). */
export const HANG_GUARD_MS = 10_000;

/** POSTs raw bytes with node:http and answers status, headers and body text. */
export function postRaw(url: string, headers: Record<string, string | number>, body: Buffer): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-length": body.length, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", reject);
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${HANG_GUARD_MS} ms to a complete request`));
    }, HANG_GUARD_MS);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
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

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" });

function xmlList(node: unknown, item: string, attr: string): string[] {
  if (node === undefined || node === "") return [];
  const items = (node as Record<string, unknown>)[item];
  if (items === undefined) return [];
  return (Array.isArray(items) ? items : [items]).map((i) => String((i as Record<string, unknown>)[attr]));
}

/** Parses an API answer in XML (`format` absent or `xml`) or JSON. */
export function parseRsp(answer: HttpAnswer, format: "xml" | "json" = "xml"): Rsp {
  if (format === "json") {
    const parsed = JSON.parse(answer.text) as { rsp: { stat: string; _content?: { error?: Rsp["error"]; document?: Rsp["document"] } } };
    const out: Rsp = { stat: parsed.rsp.stat };
    if (parsed.rsp._content?.error) out.error = parsed.rsp._content.error;
    if (parsed.rsp._content?.document) out.document = parsed.rsp._content.document;
    return out;
  }
  const parsed = xml.parse(answer.text) as { rsp?: Record<string, unknown> };
  const rsp = parsed.rsp;
  if (rsp === undefined || typeof rsp !== "object") throw new Error(`not an rsp envelope: ${answer.text}`);
  const out: Rsp = { stat: String(rsp.stat) };
  if (rsp.error !== undefined) out.error = rsp.error as Rsp["error"];
  if (rsp.document !== undefined) {
    const { tags, folders, ...simple } = rsp.document as Record<string, unknown>;
    out.document = { ...simple, tags: xmlList(tags, "tag", "value"), folders: xmlList(folders, "folder", "id") };
  }
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
