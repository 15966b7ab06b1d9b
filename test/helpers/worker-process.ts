import { spawn, type ChildProcess } from "node:child_process";
import { after } from "node:test";
import { PROJECT_ROOT, QUIRE_BIN } from "./paths.ts";

/** `quire worker` processes for tests that kill or refuse them. */
export interface Worker {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | string>;
}

/** Every worker this file started: none may outlive it, even when a test times out. */
const spawned = new Set<ChildProcess>();
const killAll = () => {
  for (const c of spawned) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
};
process.once("exit", killAll);
after(killAll);

export function startWorker(env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [QUIRE_BIN, "worker"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, QUIRE_LOG_LEVEL: "info", ...env },
    // The IPC channel stops the worker (as `quire serve`'s) if this test process dies however it dies.
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  spawned.add(child);
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, sig) => resolve(sig ?? code ?? -1)));
  return { child, out: () => out, exited };
}
