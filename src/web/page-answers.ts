import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { FastifyReply, FastifyRequest } from "fastify";
import { SizeBoundedLru } from "../size-bounded-lru.ts";

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Below this a compressed body saves less than its headers cost. */
const COMPRESS_FROM = 1024;

export type Encoding = "br" | "gzip";

/** The compression of each encoding, as every answer is compressed (brotli 5, gzip 6). */
export const COMPRESSION = {
  br: (size: number) => ({ params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: size } }),
  gzip: { level: 6 },
} as const;

/** A body's strong ETag: its SHA-256, shortened. */
export const answerEtag = (body: Buffer) => createHash("sha256").update(body).digest("base64url").slice(0, 27);

/**
 * A generated body, its strong ETag, and its compressed forms, each made once when first asked for.
 * Compression runs in zlib's thread pool (the async API), never on the event loop.
 */
export class Answer {
  readonly etag: string;
  private readonly encoded = new Map<Encoding, Promise<Buffer>>();

  constructor(readonly body: Buffer) {
    this.etag = answerEtag(body);
  }

  /** Bytes held, counting both compressed forms at a fraction of the body each (they are much smaller); fixed, as the LRU needs. */
  get size(): number {
    return Math.ceil(this.body.length * 1.6);
  }

  compressed(encoding: Encoding): Promise<Buffer> {
    let p = this.encoded.get(encoding);
    if (!p) {
      // Brotli at 5 compresses text better than gzip's 6 at about its speed; 11 would take seconds for a big reader.
      p = encoding === "br"
        ? brotliAsync(this.body, COMPRESSION.br(this.body.length))
        : gzipAsync(this.body, COMPRESSION.gzip);
      this.encoded.set(encoding, p);
      p.catch(() => this.encoded.delete(encoding));
    }
    return p;
  }
}

/** The client's preferred encoding among those we make (br, then gzip); q=0 refuses one. */
export function acceptedEncoding(header: string | string[] | undefined): Encoding | undefined {
  const offered = new Map<string, number>();
  for (const part of String(header ?? "").toLowerCase().split(",")) {
    const [name, ...params] = part.trim().split(";");
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name) offered.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  for (const e of ["br", "gzip"] as const) if ((offered.get(e) ?? 0) > 0) return e;
  return undefined;
}

/**
 * Sends an answer with its strong ETag (each encoding its own, as a strong ETag must), 304 when the
 * client has it, compressed when the client takes it and it is worth it.
 */
/** The encoding `sendAnswer` will send this body in, if any. */
export function encodingFor(req: FastifyRequest, bodyBytes: number, contentType: string): Encoding | undefined {
  return bodyBytes >= COMPRESS_FROM && !contentType.startsWith("image/") ? acceptedEncoding(req.headers["accept-encoding"]) : undefined;
}

export async function sendAnswer(req: FastifyRequest, reply: FastifyReply, answer: Answer, contentType: string, cacheControl: string) {
  const encoding = encodingFor(req, answer.body.length, contentType);
  return sendBody(req, reply, { etag: answer.etag, encoding, bytes: () => (encoding === undefined ? answer.body : answer.compressed(encoding)) }, contentType, cacheControl);
}

/**
 * The same for a body in one form only, `encoding`'s (undefined: as it is), with `etag` the hash
 * of the body as it is (a reader's search, made and compressed in a thread: the uncompressed page
 * never comes back to the event loop when the reader takes a compressed one).
 */
export async function sendBody(
  req: FastifyRequest,
  reply: FastifyReply,
  body: { etag: string; encoding: Encoding | undefined; bytes(): Buffer | Promise<Buffer> },
  contentType: string,
  cacheControl: string,
) {
  const { encoding } = body;
  const etag = encoding === undefined ? `"${body.etag}"` : `"${body.etag}-${encoding === "gzip" ? "gz" : "br"}"`;
  reply.header("etag", etag).header("cache-control", cacheControl).header("vary", "accept-encoding");
  if (etagMatches(req.headers["if-none-match"], etag)) return reply.code(304).send();
  reply.type(contentType);
  if (encoding === undefined) return reply.send(await body.bytes());
  return reply.header("content-encoding", encoding).send(await body.bytes());
}

export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/**
 * Answers built once and kept, bounded by bytes; concurrent requests for one key share one build.
 * `built` tells the caller whether this request made the answer (rather than finding it made, or
 * waiting for another request's build).
 */
export class AnswerCache {
  private readonly cache: SizeBoundedLru<string, Answer>;
  private readonly building = new Map<string, Promise<Answer>>();

  constructor(maxBytes: number) {
    this.cache = new SizeBoundedLru<string, Answer>({ maxTotal: maxBytes, maxEntry: maxBytes / 4 }, (_k, a) => a.size);
  }

  /** Whether the answer is kept or being built: asking for it now builds nothing. */
  has(key: string): boolean {
    return this.building.has(key) || this.cache.has(key);
  }

  async get(key: string, build: () => Promise<string | Buffer>): Promise<{ answer: Answer; built: boolean }> {
    const kept = this.cache.get(key);
    if (kept) return { answer: kept, built: false };
    const waiting = this.building.get(key);
    if (waiting) return { answer: await waiting, built: false };
    const pending = build().then((body) => new Answer(typeof body === "string" ? Buffer.from(body) : body));
    this.building.set(key, pending);
    pending.then((a) => this.cache.set(key, a), () => undefined).finally(() => this.building.delete(key));
    return { answer: await pending, built: true };
  }
}
