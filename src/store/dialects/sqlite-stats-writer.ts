import { Worker } from "node:worker_threads";
import type { StatBatch } from "../stat-batch.ts";
import type { StatsAnswer, StatsTask } from "./sqlite-stats-messages.ts";

/**
 * The statistics counter's batches written off the event loop. better-sqlite3 is synchronous: a
 * batch of thousands of events written on the event loop held every request behind it for tens
 * of milliseconds each second, which showed in the reader page's p99 (docs/statistics.md). Here
 * one thread with its own connection to the file (sqlite-stats-worker.ts) writes them, one batch
 * at a time; SQLite's write lock orders it with the main connection's writes as with another
 * process's.
 *
 * The thread starts with the first batch, and holds the process open only while it writes one; a
 * thread that dies fails its batch (the counter keeps it for the next tick) and the next batch
 * starts a new one.
 */
const BOOT = new URL("../../thread-boot.mjs", import.meta.url);
const ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./sqlite-stats-worker.ts" : "./sqlite-stats-worker.js", import.meta.url).href;

interface Pending {
  resolve(counted: number): void;
  reject(err: Error): void;
}

const nothing = () => undefined;

export interface SqliteStatsWriter {
  write(batch: StatBatch, sweepBefore?: number): Promise<number>;
  close(): Promise<void>;
}

export function sqliteStatsWriter(file: string): SqliteStatsWriter {
  let thread: { worker: Worker; pending: Map<number, Pending> } | undefined;
  let nextId = 1;
  let closed = false;
  const inflight = new Set<Promise<unknown>>();

  const start = () => {
    const worker = new Worker(BOOT, { workerData: { entry: ENTRY, file } });
    const pending = new Map<number, Pending>();
    const t = { worker, pending };
    const fail = (err: Error) => {
      if (thread === t) thread = undefined;
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    worker.on("message", (a: StatsAnswer) => {
      const p = pending.get(a.id);
      if (!p) return;
      pending.delete(a.id);
      if (pending.size === 0) worker.unref();
      if (a.ok) p.resolve(a.counted);
      else p.reject(Object.assign(new Error(a.message), a.code === undefined ? {} : { code: a.code }));
    });
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`statistics thread exited with ${code}`)));
    worker.unref();
    return t;
  };

  return {
    write(batch, sweepBefore) {
      if (closed) return Promise.reject(new Error("statistics writer closed"));
      thread ??= start();
      const t = thread;
      const id = nextId++;
      const written = new Promise<number>((resolve, reject) => {
        t.pending.set(id, { resolve, reject });
        t.worker.ref();
        t.worker.postMessage({ id, events: batch, ...(sweepBefore === undefined ? {} : { sweepBefore }) } satisfies StatsTask);
      });
      const settled = written.then(nothing, nothing).finally(() => inflight.delete(settled));
      inflight.add(settled);
      return written;
    },
    async close() {
      closed = true;
      const t = thread;
      thread = undefined;
      if (!t) return;
      // A batch under way is let finish: a normal stop loses nothing.
      await Promise.all([...inflight]);
      await t.worker.terminate();
    },
  };
}
