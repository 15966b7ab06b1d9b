import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { basename } from "node:path";
import { randomBytes } from "node:crypto";
import { computeSignature } from "../domain/signature.ts";
import { rawHttp, type RawRequest, type RawResponse } from "./raw-http.ts";

export interface ClientOptions {
  /** e.g. http://localhost:8080 — the normal endpoint is `${baseUrl}/1_0`. */
  baseUrl: string;
  /** Defaults to `${baseUrl}/upload`; its endpoint is `${uploadUrl}/1_0`. */
  uploadUrl?: string;
  apiKey: string;
  apiSecret: string;
  /** Action prefix the server accepts (QUIRE_ACTION_PREFIXES), default `svc`. */
  prefix?: string;
}

export type Params = Record<string, string>;

/** The answer in JSON form: `rsp.stat` and `rsp._content`. */
export interface ApiAnswer {
  rsp: { stat: "ok" | "fail"; _content?: Record<string, unknown> & { error?: { code: string; message: string; field?: string } } };
}

export class ApiFailure extends Error {
  constructor(readonly code: string, readonly apiMessage: string, readonly field: string | undefined) {
    super(`${code} ${apiMessage}${field ? ` (${field})` : ""}`);
  }
}

/** A small typed client of the Quire API that signs every request (decisions §3). */
export class QuireClient {
  private readonly opts: Required<ClientOptions>;

  constructor(opts: ClientOptions) {
    const baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.opts = { prefix: "svc", uploadUrl: `${baseUrl}/upload`, ...opts, baseUrl };
  }

  /** Adds apiKey, action, format and signature to the operation's parameters. */
  signed(action: string, params: Params): Params {
    const all: Params = { ...params, apiKey: this.opts.apiKey, action: `${this.opts.prefix}.${action}`, format: params.format ?? "json" };
    return { ...all, signature: computeSignature(this.opts.apiSecret, Object.entries(all)) };
  }

  /** The raw-bytes hatch: one request exactly as written (raw-http.ts), to this client's server, unsigned. */
  raw(req: RawRequest): Promise<RawResponse> {
    return rawHttp(this.opts.baseUrl, req);
  }

  /** Calls an operation on the normal endpoint with a form-encoded POST; answers the parsed JSON. */
  async call(action: string, params: Params = {}): Promise<ApiAnswer> {
    const res = await fetch(`${this.opts.baseUrl}/1_0`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(this.signed(action, params)).toString(),
    });
    return (await res.json()) as ApiAnswer;
  }

  /** Like `call`, but throws ApiFailure on `stat="fail"` and answers `_content`. */
  async ok(action: string, params: Params = {}): Promise<Record<string, unknown>> {
    return unwrap(await this.call(action, params));
  }

  /**
   * Uploads a file with a streamed multipart POST (fields first, so a bad request is refused
   * before the file is sent). `onProgress` sees bytes sent of the file's size.
   */
  async upload(path: string, params: Params = {}, onProgress?: (sent: number, total: number) => void): Promise<ApiAnswer> {
    const size = (await stat(path)).size;
    const boundary = `----quire${randomBytes(12).toString("hex")}`;
    const fields = Object.entries(this.signed("document.upload", params))
      .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join("");
    const fileName = basename(path).replace(/["\r\n]/g, "_");
    const head = Buffer.from(
      `${fields}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const url = new URL(`${this.opts.uploadUrl.replace(/\/+$/, "")}/1_0`);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, {
        method: "POST",
        headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": head.length + size + tail.length },
      });
      req.on("response", (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as ApiAnswer);
          } catch (err) {
            reject(err);
          }
        });
      });
      req.on("error", reject);
      req.write(head);
      let sent = 0;
      const file = createReadStream(path);
      file.on("data", (chunk) => {
        sent += chunk.length;
        onProgress?.(sent, size);
        if (!req.write(chunk)) {
          file.pause();
          req.once("drain", () => file.resume());
        }
      });
      file.on("end", () => req.end(tail));
      file.on("error", (err) => req.destroy(err));
    });
  }
}

export function unwrap(answer: ApiAnswer): Record<string, unknown> {
  const { rsp } = answer;
  if (rsp.stat !== "ok") {
    const e = rsp._content?.error;
    throw new ApiFailure(e?.code ?? "???", e?.message ?? "unknown failure", e?.field);
  }
  return rsp._content ?? {};
}
