import { fork, type ChildProcess } from "node:child_process";
import type { StatBatch } from "../stat-batch.ts";
import type { StatsAnswer, StatsTask } from "./sqlite-stats-messages.ts";

/**
 * The statistics counter's batches written off the event loop. better-sqlite3 is synchronous: a
 * batch of thousands of events written on the event loop held every request behind it for tens
 * of milliseconds each second, which showed in the reader page's p99 (docs/statistics.md). Here
 * a process of its own, with its own connection to the file (sqlite-stats-worker.ts), writes them,
 * one batch at a time; SQLite's write lock orders it with the server's writes. A process, not a
 * thread: written by a thread of the server, each batch slowed the requests answered in the next
 * few tens of milliseconds enough to show in the reader page's p99; forked, the probes showed no
 * such cluster (docs/statistics.md, "Counting in columns").
 *
 * The process starts with the first batch, and holds the server open only while it writes one; a
 * process that dies fails its batch (the counter keeps it for the next tick) and the next batch
 * starts a new one. It exits when the server goes (its IPC channel closes), after the batch under way.
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
  let writer: { child: ChildProcess; pending: Map<number, Pending>; exited: Promise<void> } | undefined;
  let nextId = 1;
  let closed = false;
  const inflight = new Set<Promise<unknown>>();

  // Referenced only while a batch is under way: an idle writer never keeps the server running.
  const hold = (child: ChildProcess, on: boolean) => {
    if (on) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  };

  const start = () => {
    // No execArgv: the server's own flags (a test runner's, an inspector's) are not the writer's.
    const child = fork(BOOT, [ENTRY, file], { serialization: "advanced", execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const pending = new Map<number, Pending>();
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const w = { child, pending, exited };
    const fail = (err: Error) => {
      if (writer === w) writer = undefined;
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    child.on("message", (a: StatsAnswer) => {
      const p = pending.get(a.id);
      if (!p) return;
      pending.delete(a.id);
      if (pending.size === 0) hold(child, false);
      if (a.ok) p.resolve(a.counted);
      else p.reject(Object.assign(new Error(a.message), a.code === undefined ? {} : { code: a.code }));
    });
    child.on("error", fail);
    child.on("exit", (code, signal) => fail(new Error(`the statistics writer exited with ${code ?? signal}`)));
    hold(child, false);
    return w;
  };

  return {
    write(batch, sweepBefore) {
      if (closed) return Promise.reject(new Error("statistics writer closed"));
      writer ??= start();
      const w = writer;
      const id = nextId++;
      const written = new Promise<number>((resolve, reject) => {
        w.pending.set(id, { resolve, reject });
        hold(w.child, true);
        w.child.send({ id, events: batch, ...(sweepBefore === undefined ? {} : { sweepBefore }) } satisfies StatsTask, (err) => {
          if (!err) return;
          w.pending.delete(id);
          reject(err);
        });
      });
      const settled = written.then(nothing, nothing).finally(() => inflight.delete(settled));
      inflight.add(settled);
      return written;
    },
    async close() {
      closed = true;
      const w = writer;
      writer = undefined;
      if (!w) return;
      // A batch under way is let finish: a normal stop loses nothing.
      await Promise.all([...inflight]);
      if (w.child.connected) w.child.disconnect();
      // It exits as its channel closes; one that does not within seconds is stopped.
      const late = setTimeout(() => w.child.kill("SIGKILL"), 5000);
      await w.exited;
      clearTimeout(late);
    },
  };
}
