import { Worker } from "node:worker_threads";
import { SearchGate } from "../store/search-gate.ts";
import type { RenderAnswer, RenderTask, RenderText } from "./reader-render-worker.ts";

/**
 * The reader's `?q=` pages, built off the event loop. Each is built for its reader and never kept
 * (a query per reader), and a reader page holds the whole document's text: built on the event
 * loop, 8 clients sending 64-word queries of a 1,000,000-character document held it for most of
 * every second (`/healthz` p50 620 ms). Here one thread builds them, at most `queue` waiting, the
 * rest refused at once (SearchBusyError, as searches); the thread keeps the last document's text.
 */
const BOOT = new URL("../thread-boot.mjs", import.meta.url);
const ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./reader-render-worker.ts" : "./reader-render-worker.js", import.meta.url).href;

export interface RenderedPage {
  /** The page in the encoding asked for (as it is when none was). */
  bytes: Buffer;
  /** The hash of the page as it is. */
  etag: string;
}

export function readerRenderPool(opts: { queue: number }) {
  const gate = new SearchGate({ concurrency: 1, queue: opts.queue });
  let worker: Worker | undefined;
  /** The text the thread holds now. */
  let heldKey: string | undefined;
  let pending: { id: number; resolve(p: RenderedPage): void; reject(e: Error): void } | undefined;
  let nextId = 1;

  const start = (): Worker => {
    const w = new Worker(BOOT, { workerData: { entry: ENTRY } });
    const fail = (err: Error) => {
      if (worker === w) {
        worker = undefined;
        heldKey = undefined;
      }
      const p = pending;
      pending = undefined;
      p?.reject(err);
    };
    w.on("message", (a: RenderAnswer) => {
      const p = pending;
      if (!p || p.id !== a.id) return;
      pending = undefined;
      w.unref();
      if (a.ok) p.resolve({ bytes: Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength), etag: a.etag });
      else p.reject(new Error(a.message));
    });
    w.on("error", fail);
    w.on("exit", (code) => fail(new Error(`reader render thread exited with ${code}`)));
    w.unref();
    return w;
  };

  const run = (textKey: string, text: () => RenderText, view: RenderTask["view"], encoding: RenderTask["encoding"]): Promise<RenderedPage> => {
    worker ??= start();
    const w = worker;
    w.ref();
    const id = nextId++;
    // The text is sent only when the thread does not hold it (cloned: a few milliseconds for a large document).
    const task: RenderTask = heldKey === textKey ? { id, textKey, view, encoding } : { id, textKey, text: text(), view, encoding };
    heldKey = textKey;
    return new Promise<RenderedPage>((resolve, reject) => {
      pending = { id, resolve, reject };
      w.postMessage(task);
    });
  };

  return {
    render: (textKey: string, text: () => RenderText, view: RenderTask["view"], encoding: RenderTask["encoding"]) =>
      gate.run(() => run(textKey, text, view, encoding)),
    async close() {
      const w = worker;
      worker = undefined;
      await w?.terminate();
    },
  };
}

export type ReaderRenderPool = ReturnType<typeof readerRenderPool>;
