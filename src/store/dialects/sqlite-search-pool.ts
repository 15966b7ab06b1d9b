import { Worker } from "node:worker_threads";
import type { SearchGate } from "../search-gate.ts";
import type { SearchMatch, SearchRequest } from "../search-index.ts";
import type { SearchAnswer, SearchTask } from "./sqlite-search-messages.ts";

/**
 * SQLite searches off the event loop. better-sqlite3 is synchronous: an FTS5 search of a long
 * query ran on the API's event loop for hundreds of milliseconds, and every other request (the
 * health checks included) waited behind it. Here each search runs in one of `concurrency` worker
 * threads, each with its own read-only connection to the file (sqlite-search-worker.ts), at most
 * one search per thread at a time; searches beyond them wait in a bounded queue (SearchGate),
 * and past it are refused at once.
 *
 * Threads start with the first search (a process that never searches, `quire worker`, starts
 * none), and a thread that dies takes only its own search with it: the next search starts a new
 * one. A thread holds the process open only while it runs a search.
 */
const BOOT = new URL("../../thread-boot.mjs", import.meta.url);
const ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./sqlite-search-worker.ts" : "./sqlite-search-worker.js", import.meta.url).href;

type SearchResult = { totalCount: number; matches: SearchMatch[] };

interface Thread {
  worker: Worker;
  busy: boolean;
  /** The search it runs now. */
  pending: { id: number; resolve(r: SearchResult): void; reject(e: Error): void } | undefined;
}

export interface SqliteSearchPool {
  search(req: SearchRequest): Promise<SearchResult>;
  /** Threads started and alive now (tests). */
  threads(): number;
  close(): Promise<void>;
}

/** `gate`: how many searches run and wait at once (the pool starts as many threads as it lets run). */
export function sqliteSearchPool(file: string, gate: SearchGate): SqliteSearchPool {
  const threads = new Set<Thread>();
  let nextId = 1;
  let closed = false;

  const start = (): Thread => {
    const worker = new Worker(BOOT, { workerData: { entry: ENTRY, file } });
    const thread: Thread = { worker, busy: false, pending: undefined };
    const fail = (err: Error) => {
      threads.delete(thread);
      const p = thread.pending;
      thread.pending = undefined;
      p?.reject(err);
    };
    worker.on("message", (a: SearchAnswer) => {
      const p = thread.pending;
      if (!p || p.id !== a.id) return;
      thread.pending = undefined;
      thread.busy = false;
      worker.unref();
      if (a.ok) p.resolve(a.result);
      else p.reject(Object.assign(new Error(a.message), a.code === undefined ? {} : { code: a.code }));
    });
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`search thread exited with ${code}`)));
    worker.unref();
    threads.add(thread);
    return thread;
  };

  const run = (req: SearchRequest): Promise<SearchResult> => {
    if (closed) return Promise.reject(new Error("search pool closed"));
    // The gate lets at most `concurrency` searches through, so a free thread exists or may be started.
    const thread = [...threads].find((t) => !t.busy) ?? start();
    thread.busy = true;
    thread.worker.ref();
    const id = nextId++;
    return new Promise<SearchResult>((resolve, reject) => {
      thread.pending = { id, resolve, reject };
      thread.worker.postMessage({ id, req } satisfies SearchTask);
    });
  };

  return {
    search: (req) => gate.run(() => run(req)),
    threads: () => threads.size,
    async close() {
      closed = true;
      const all = [...threads];
      threads.clear();
      await Promise.all(all.map((t) => t.worker.terminate()));
    },
  };
}
