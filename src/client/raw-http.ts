import { connect } from "node:net";

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
  body?: Buffer | string;
  /** No answer within this long rejects (a hang guard; none when absent). */
  timeoutMs?: number;
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

export function rawHttp(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body);
  let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n`;
  for (const [name, value] of req.headers ?? []) head += `${name}: ${value}\r\n`;
  head += "Connection: close\r\n\r\n";
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = req.timeoutMs === undefined ? undefined : setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${req.timeoutMs} ms to a complete request`));
    }, req.timeoutMs);
    const settle = (err?: Error) => {
      clearTimeout(timer);
      const answer = parseAnswer(Buffer.concat(chunks));
      if (answer) resolve(answer);
      // A server may answer and close before it has read the whole body (a refusal): what it
      // answered counts, the write error after it does not.
      else reject(err ?? new Error(`no HTTP answer: ${Buffer.concat(chunks).toString("latin1")}`));
    };
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (err) => settle(err));
    socket.on("end", () => settle());
    socket.write(Buffer.concat([Buffer.from(head, "latin1"), body]));
  });
}
