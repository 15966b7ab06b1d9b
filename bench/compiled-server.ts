/**
 * What the benchmarks that measure a real server process share: `quire serve --no-worker` from
 * the compiled build, with the flags Quire's start gives node (as production runs it: from the
 * sources, tsx would also be loaded into every worker thread the server starts, and weigh on the
 * figures), and a document converted by the real pipeline, waited for.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { request, type Agent } from "node:http";
import { join } from "node:path";
import { NODE_FLAGS } from "../bin/node-flags.js";
import { unwrap, type QuireClient } from "../src/client/quire-client.ts";
import { exited } from "../test/helpers/server-process.ts";
import { cpuSecondsOfTree } from "./bench-common.ts";
import type { TestServer } from "../test/helpers/test-server.ts";

export interface CompiledServer {
  url: string;
  rssBytes(): Promise<number>;
  /** CPU seconds the process has used, with the processes it started that still run (every thread: user and system time from /proc/<pid>/stat). */
  cpuSeconds(): Promise<number>;
  kill(): Promise<void>;
}

export async function startCompiledServer(dist: string, dataDir: string, env: Record<string, string> = {}): Promise<CompiledServer> {
  // With the flags every way of starting Quire gives node (bin/node-flags.js).
  const child = spawn(process.execPath, [...NODE_FLAGS, join(dist, "cli", "main.js"), "serve", "--no-worker"], {
    env: { ...process.env, QUIRE_DATA_DIR: dataDir, QUIRE_PORT: "0", QUIRE_DEMO_ACCOUNT: "0", QUIRE_LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /Quire listening on (http:\/\/[^\s]+) /.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", () => reject(new Error(`quire serve ended before it listened:\n${out}`)));
  });
  // A server that ends before the benchmark stops it says why (onData keeps collecting its output).
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping) process.stderr.write(`quire serve ended (${code ?? signal}) during the benchmark:\n${out.slice(-4000)}\n`);
  });
  return {
    url,
    async rssBytes() {
      const kb = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${child.pid}/status`, "utf8"));
      return Number(kb?.[1]) * 1024;
    },
    async cpuSeconds() {
      return cpuSecondsOfTree(child.pid!);
    },
    async kill() {
      stopping = true;
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

/** Uploads a file and waits until the real worker has published it; its reader's path. */
export async function publishAndWait(server: TestServer, client: QuireClient, path: string, title: string): Promise<string> {
  const id = (unwrap(await client.upload(path, { title })).document as { documentId: string }).documentId;
  for (;;) {
    const doc = await server.services.store.documents.getForConversion(id);
    if (doc?.state === "A") return `/${doc.username}/docs/${doc.name}`;
    if (doc?.state !== "P") throw new Error(`${title}: conversion ended ${doc?.state} (${doc?.errorMessage})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;

/** One GET through `agent`, its body read and dropped; resolves with the milliseconds it took. */
export function timedGet(url: string, agent: Agent, headers: Record<string, string> = {}): Promise<{ ms: number; status: number; bytes: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { agent, headers }, (res) => {
      let bytes = 0;
      res.on("data", (c: Buffer) => (bytes += c.length));
      res.on("end", () => resolve({ ms: performance.now() - start, status: res.statusCode ?? 0, bytes }));
    }).on("error", reject).end();
  });
}

export const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
