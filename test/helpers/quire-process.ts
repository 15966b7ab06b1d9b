import { spawn, type ChildProcess } from "node:child_process";
import { NODE_FLAGS } from "../../bin/node-flags.js";
import { PROJECT_ROOT, QUIRE_BIN } from "./paths.ts";

export interface QuireProcess {
  child: ChildProcess;
  /** Everything written to stdout so far (pino JSON lines and plain messages). */
  readonly out: string;
  /** Resolves with the exit code (or signal name) once the process ends. */
  exited: Promise<number | string>;
  /** The first stdout match of `re`, waiting for it (fails if the process ends first). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Parsed pino lines of stdout. */
  logLines(): Array<Record<string, unknown>>;
  kill(signal: NodeJS.Signals): Promise<number | string>;
}

/**
 * Runs `quire <args>` as its own process (bin/quire.js, with the flags its first line gives
 * node), as an operator would. `cpus` (a taskset list such as "0") keeps the process and all it
 * starts on those cores: a machine of that many cores, for the benchmarks.
 */
export function spawnQuire(args: string[], env: Record<string, string>, opts: { cpus?: string } = {}): QuireProcess {
  const command = [process.execPath, ...NODE_FLAGS, QUIRE_BIN, ...args];
  if (opts.cpus !== undefined) command.unshift("taskset", "--cpu-list", opts.cpus);
  const child = spawn(command[0]!, command.slice(1), {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const waiters = new Set<() => void>();
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString();
    for (const w of waiters) w();
  });
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      for (const w of waiters) w();
      resolve(signal ?? code ?? -1);
    });
  });
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    get out() {
      return out;
    },
    exited,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(out);
          if (m) return done(() => resolve(m));
          if (ended()) return done(() => reject(new Error(`quire ${args.join(" ")} ended before ${re}:\n${out}\n${err}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`no ${re} from quire ${args.join(" ")} in ${timeoutMs} ms:\n${out}\n${err}`))), timeoutMs);
        const done = (f: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          f();
        };
        waiters.add(check);
        check();
      });
    },
    logLines() {
      return out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        });
    },
    kill(signal) {
      if (!ended()) child.kill(signal);
      return exited;
    },
  };
}
