import { readdir, stat } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { closing, newBoundary, partHead } from "./multipart.ts";

/**
 * An upload written piece by piece over a plain socket, its file part first and the other fields
 * after it (the order that makes a body cost disk before it is authenticated), from a chosen
 * local address (127.0.0.2, 127.0.0.3…: distinct client addresses on one machine). The server
 * may answer before the body ends and close; the socket keeps reading whatever it sends, and a
 * write failing after that is no error (node:http's client would drop the answer then).
 */
export interface FileFirstUpload {
  /** Writes `bytes` more bytes of the file in one go; resolves when they are handed over (or the upload was answered). */
  writeFile(bytes: number): Promise<void>;
  /** Ends the file, writes these fields and ends the body. */
  finish(fieldsAfter: Record<string, string>): void;
  /** The answer: status and body text; rejects when the connection ends without a whole one. */
  readonly answer: Promise<{ status: number; text: string }>;
  /** Whether a whole answer has come. */
  answered(): boolean;
  /** Drops the connection. */
  abort(): void;
}

export function fileFirstUpload(
  uploadUrl: string,
  /** `declaredLength` "chunked": no Content-Length, the body sent with Transfer-Encoding: chunked. */
  opts: { localAddress?: string; declaredLength: number | "chunked"; fieldsBefore?: Record<string, string>; fileName?: string },
): FileFirstUpload {
  const url = new URL(uploadUrl);
  const boundary = newBoundary();
  const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: opts.localAddress });
  let received = Buffer.alloc(0);
  let parsed: { status: number; text: string } | undefined;
  const parse = (): { status: number; text: string } | undefined => {
    const end = received.indexOf("\r\n\r\n");
    if (end === -1) return undefined;
    const head = received.subarray(0, end).toString("latin1");
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
    const body = received.subarray(end + 4);
    if (!(body.length >= length)) return undefined;
    return { status: Number(head.split(" ")[1]), text: body.subarray(0, length).toString("utf8") };
  };
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      parsed ??= parse();
      if (parsed) {
        resolve(parsed);
        socket.destroy();
      }
    });
    socket.on("error", () => {}); // a write after the server closed: the answer (or its absence) is what counts
    socket.on("close", () => (parsed ? resolve(parsed) : reject(new Error(`connection closed without a whole answer: ${received.toString("latin1").slice(0, 200)}`))));
  });
  answer.catch(() => {});
  const chunked = opts.declaredLength === "chunked";
  const frame = (data: Buffer) => (chunked && data.length > 0 ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]) : data);
  const write = (data: Buffer): Promise<void> =>
    new Promise((resolve) => {
      if (parsed || socket.destroyed) return resolve();
      socket.write(frame(data), () => resolve());
    });
  const field = (name: string, value: string) => Buffer.concat([partHead(boundary, { name, value }), Buffer.from(value), Buffer.from("\r\n")]);
  const head = Buffer.from(
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `${chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${opts.declaredLength}`}\r\nConnection: close\r\n\r\n`,
  );
  const start = Buffer.concat([
    ...Object.entries(opts.fieldsBefore ?? {}).map(([n, v]) => field(n, v)),
    partHead(boundary, { name: "file", filename: opts.fileName ?? "a.txt", contentType: "text/plain" }),
  ]);
  let started = false;
  return {
    async writeFile(bytes) {
      const first = !started;
      started = true;
      if (first) socket.write(head);
      await write(Buffer.concat([...(first ? [start] : []), Buffer.alloc(bytes, 0x41)]));
    },
    finish(fieldsAfter) {
      if (parsed || socket.destroyed) return;
      const after = Object.entries(fieldsAfter).map(([n, v]) => Buffer.concat([Buffer.from("\r\n"), partHead(boundary, { name: n, value: v }), Buffer.from(v)]));
      socket.write(Buffer.concat([frame(Buffer.concat([...after, closing(boundary)])), Buffer.from(chunked ? "0\r\n\r\n" : "")]));
    },
    answer,
    answered: () => parsed !== undefined,
    abort: () => socket.destroy(),
  };
}

/** The body length for a file of `fileBytes` with these fields around it, as fileFirstUpload writes it. */
export function fileFirstLength(fileBytes: number, fieldsAfter: Record<string, string>, fieldsBefore: Record<string, string> = {}, fileName = "a.txt"): number {
  const b = "-".repeat(newBoundary().length);
  const field = (name: string, value: string) => partHead(b, { name, value }).length + Buffer.byteLength(value);
  let n = partHead(b, { name: "file", filename: fileName, contentType: "text/plain" }).length + fileBytes;
  for (const [k, v] of Object.entries(fieldsBefore)) n += field(k, v) + 2;
  for (const [k, v] of Object.entries(fieldsAfter)) n += 2 + field(k, v);
  return n + closing(b).length;
}

/** Polls a folder's total file size until stopped; answers the largest total seen. */
export function watchFolderBytes(dir: string, everyMs = 5): { stop(): Promise<number>; peak(): number } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      let total = 0;
      let names: string[] = [];
      try {
        names = await readdir(dir);
      } catch {
        // not made yet
      }
      for (const name of names) {
        try {
          total += (await stat(join(dir, name))).size;
        } catch {
          // removed meanwhile
        }
      }
      peak = Math.max(peak, total);
      // unref: a test that fails before stopping it must not be kept alive by it
      await new Promise((r) => setTimeout(r, everyMs).unref());
    }
  })();
  return {
    peak: () => peak,
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}
