import { connect, type Socket } from "node:net";

/**
 * The client's raw-bytes hatch: one request over its own connection, every byte of it chosen by
 * the caller, for requests no well-behaved client would send (malformed lines, lying lengths,
 * odd encodings) and for reading an answer exactly as it came (headers as sent, body bytes).
 * `QuireClient.raw` sends through it; the tests' helpers (test/helpers/api-client.ts) too.
 */

export interface RawRequest {
  method: string;
  /** Path and query exactly as written on the request line (ASCII). */
  path: string;
  /** Sent as given, in this order, after Host; nothing else is added but `Connection: close`. */
  headers?: Array<[string, string]>;
  /**
   * The body: bytes, or chunks written as they come (a slow or half-sent body; the caller declares
   * its own Content-Length). Writing stops once the server has answered or closed.
   */
  body?: Buffer | string | AsyncIterable<Uint8Array>;
  /** No answer within this long rejects (a hang guard; none when absent). */
  timeoutMs?: number;
  /** Hangs up at once, mid-body if need be (a client that leaves): rejects unless already answered. */
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  /** Header names lowercased; a repeated header keeps its values joined by ", ". */
  headers: Record<string, string>;
  bytes: Buffer;
  body: string;
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf("\r\n", at);
    const size = parseInt(data.subarray(at, eol).toString("latin1"), 16);
    if (!(size > 0)) break;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function parseAnswer(all: Buffer): RawResponse | undefined {
  const split = all.indexOf("\r\n\r\n");
  if (split === -1) return undefined;
  const [statusLine = "", ...lines] = all.subarray(0, split).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let bytes: Buffer = all.subarray(split + 4);
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) bytes = dechunk(bytes);
  else if (headers["content-length"] !== undefined) bytes = bytes.subarray(0, Number(headers["content-length"]));
  return { status: Number(statusLine.split(" ")[1]), headers, bytes, body: bytes.toString("utf8") };
}

function isChunks(body: RawRequest["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && !Buffer.isBuffer(body) && Symbol.asyncIterator in body;
}

export function rawHttp(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const chunked = isChunks(req.body) ? req.body : undefined;
  const body = req.body === undefined || chunked ? Buffer.alloc(0) : Buffer.from(req.body as Buffer | string);
  let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n`;
  for (const [name, value] of req.headers ?? []) head += `${name}: ${value}\r\n`;
  head += "Connection: close\r\n\r\n";
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = req.timeoutMs === undefined ? undefined : setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${req.timeoutMs} ms`));
    }, req.timeoutMs);
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", hangUp);
      const answer = parseAnswer(Buffer.concat(chunks));
      if (answer) resolve(answer);
      // A server may answer and close before it has read the whole body (a refusal): what it
      // answered counts, the write error after it does not.
      else reject(err ?? new Error(`no HTTP answer: ${Buffer.concat(chunks).toString("latin1")}`));
    };
    const hangUp = () => {
      socket.destroy();
      settle(new Error("the request was abandoned", { cause: req.signal?.reason }));
    };
    if (req.signal?.aborted) return hangUp();
    req.signal?.addEventListener("abort", hangUp, { once: true });
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (err) => settle(err));
    socket.on("end", () => settle());
    socket.on("close", () => settle());
    socket.write(Buffer.concat([Buffer.from(head, "latin1"), body]));
    // A streamed body stops as soon as the server starts answering: it has said what it had to.
    if (chunked) void writeChunks(socket, chunked, () => settled || chunks.length > 0).catch((err: unknown) => {
      socket.destroy();
      settle(err instanceof Error ? err : new Error(String(err)));
    });
  });
}

/** Writes the chunks as they come, waiting for the socket to drain; stops once the exchange is over. */
async function writeChunks(socket: Socket, chunks: AsyncIterable<Uint8Array>, over: () => boolean): Promise<void> {
  for await (const chunk of chunks) {
    if (over() || socket.destroyed || socket.writableEnded) return;
    if (!socket.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off("drain", done);
          socket.off("close", done);
          resolve();
        };
        socket.on("drain", done);
        socket.on("close", done);
      });
    }
  }
}
