import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccount, type NewCredentials } from "../../src/accounts/account-admin.ts";
import { openStore } from "../../src/store/open-store.ts";
import { PROJECT_ROOT, QUIRE_BIN } from "./paths.ts";

/**
 * A real `quire serve --no-worker` (or `quire worker`) in a child process, so a test can read its
 * memory from /proc, read everything it logs, and kill it with SIGKILL.
 */
export interface QuireProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` for a server; empty for a worker. */
  url: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resident set size in bytes, from /proc. */
  rssBytes(): Promise<number>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A data folder with one account made directly in its store (the server is not running yet). */
export async function prepareDataDir(): Promise<{ dataDir: string; account: NewCredentials }> {
  const dataDir = await mkdtemp(join(tmpdir(), "quire-proc-"));
  const store = await openStore(join(dataDir, "quire.db"));
  try {
    return { dataDir, account: await createAccount(store, "tester") };
  } finally {
    await store.close();
  }
}

export const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

function startQuire(args: string[], dataDir: string, env: Record<string, string>, ready: RegExp | undefined): Promise<QuireProcess> {
  const child = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, QUIRE_DATA_DIR: dataDir, QUIRE_PORT: "0", QUIRE_DEMO_ACCOUNT: "0", QUIRE_LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const proc: QuireProcess = {
    child,
    url: "",
    output: () => out,
    async rssBytes() {
      const { readFile } = await import("node:fs/promises");
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      const kb = /VmRSS:\s+(\d+) kB/.exec(status);
      if (!kb) throw new Error("no VmRSS");
      return Number(kb[1]) * 1024;
    },
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited(child);
    },
  };
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const m = ready ? /Quire listening on (http:\/\/[^\s]+) /.exec(out) : null;
      if (m && proc.url === "") {
        proc.url = m[1]!;
        resolve(proc);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code, signal) => reject(new Error(`quire ${args.join(" ")} exited (${signal ?? code}) before it was ready:\n${out}`)));
    child.once("error", reject);
    if (!ready) resolve(proc);
  });
}

/** `quire serve --no-worker` on a free port; resolves once it listens. */
export function startServerProcess(dataDir: string, env: Record<string, string> = {}): Promise<QuireProcess> {
  return startQuire([QUIRE_BIN, "serve", "--no-worker"], dataDir, env, /Quire listening on/);
}

