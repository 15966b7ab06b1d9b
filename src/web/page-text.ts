import { Worker } from "node:worker_threads";
import { blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import { SizeBoundedLru } from "../size-bounded-lru.ts";
import { buildTextModel, foldForSearch, textModelBytes, type TextBounds, type TextModel } from "./text-model.ts";

export { foldForSearch, type TextBounds, type TextModel } from "./text-model.ts";

/** Text models kept in memory, in bytes: a reader's page, its page texts and its searches share one. */
const CACHE_BYTES = 96 * 1024 * 1024;
/** Below this a stored text.json is parsed at once: a worker thread costs more than the parse. */
const INLINE_BYTES = 256 * 1024;
/**
 * Past this a stored text.json is not read at all (a blob written before text was bounded at
 * extraction): its pages show without text rather than the server holding hundreds of megabytes.
 */
const MAX_STORED_BYTES = 256 * 1024 * 1024;

const WORKER_BOOT = new URL("../thread-boot.mjs", import.meta.url);
const WORKER_ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./text-worker.ts" : "./text-worker.js", import.meta.url).href;

/** Builds a model in a worker thread, which ends with the build (its heap goes with it). */
function buildInWorker(raw: Uint8Array<ArrayBuffer>, pageCount: number, bounds: TextBounds): Promise<TextModel> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_BOOT, {
      workerData: { entry: WORKER_ENTRY, raw: raw.buffer, pageCount, bounds },
      transferList: [raw.buffer],
    });
    worker.once("message", (m: TextModel) => resolve(m));
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`text worker exited with ${code} before answering`)));
  });
}

async function readStored(blobs: BlobStore, blobId: string): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of await blobs.get(blobKeys.text(blobId))) {
      size += (chunk as Buffer).length;
      if (size > MAX_STORED_BYTES) return new Uint8Array(0);
      chunks.push(chunk as Buffer);
    }
  } catch {
    return new Uint8Array(0); // converted before text existed: pages without text
  }
  // One buffer of its own (never a slice of Node's pool), so it can be handed to a worker.
  const raw = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    raw.set(c, at);
    at += c.length;
  }
  return raw;
}

/**
 * The text model of a document (by its blob, which never changes once written), through an LRU.
 * Concurrent requests for one document share one build, and one build runs at a time, so a burst
 * of views of large documents holds at most one stored text in memory.
 */
export function documentTextReader(blobs: BlobStore, bounds: TextBounds) {
  const cache = new SizeBoundedLru<string, TextModel>({ maxTotal: CACHE_BYTES, maxEntry: CACHE_BYTES / 2 }, (_k, m) => textModelBytes(m));
  const building = new Map<string, Promise<TextModel>>();
  let queue: Promise<unknown> = Promise.resolve();
  let builds = 0;

  const build = async (blobId: string, pageCount: number): Promise<TextModel> => {
    builds++;
    const raw = await readStored(blobs, blobId);
    return raw.length <= INLINE_BYTES ? buildTextModel(raw, pageCount, bounds) : buildInWorker(raw, pageCount, bounds);
  };

  const read = (blobId: string, pageCount: number): Promise<TextModel> => {
    const key = `${blobId}/${pageCount}`;
    const hit = cache.get(key);
    if (hit) return Promise.resolve(hit);
    let pending = building.get(key);
    if (!pending) {
      pending = queue.then(() => build(blobId, pageCount));
      queue = pending.catch(() => undefined);
      building.set(key, pending);
      pending.then((m) => cache.set(key, m), () => undefined).finally(() => building.delete(key));
    }
    return pending;
  };
  return Object.assign(read, { builds: () => builds });
}

/** Page n's `{page, text, words}` JSON, as the text layer fetches it. */
export function pageJson(m: TextModel, n: number): Buffer {
  return Buffer.from(m.json.buffer, m.json.byteOffset + m.offsets[n - 1]!, m.offsets[n]! - m.offsets[n - 1]!);
}

export interface SearchHit {
  page: number;
  snippet: string;
}

/** Pages holding every term of the query, each with a snippet around its first match. */
export function searchPages(m: TextModel, query: string, limit = 200): SearchHit[] {
  const terms = foldForSearch(query).split(/\s+/).filter(Boolean);
  if (terms.length === 0) return [];
  const hits: SearchHit[] = [];
  for (let i = 0; i < m.folded.length; i++) {
    const folded = m.folded[i]!;
    if (!terms.every((t) => folded.includes(t))) continue;
    // Folding may change lengths (ligatures), so snippets are cut from the folded text's positions only roughly.
    const flat = m.text[i]!.replace(/\s+/g, " ");
    const at = folded.indexOf(terms[0]!);
    const start = Math.max(0, at - 60);
    const snippet = (start > 0 ? "…" : "") + flat.slice(start, at + 100).trim() + (at + 100 < flat.length ? "…" : "");
    hits.push({ page: i + 1, snippet });
    if (hits.length >= limit) break;
  }
  return hits;
}
