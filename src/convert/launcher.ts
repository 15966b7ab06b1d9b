/**
 * Starts short-lived converter programs through a small process of our own (launcher-process.mjs)
 * instead of from this one. Node's spawn forks the calling process, and Linux copies the page
 * tables of every page it holds: from a worker holding 500 MB a spawn used about 14 ms of
 * processor time and blocked the event loop about 28 ms; from the launcher, about a millisecond.
 * A conversion starts a dozen programs or more (bubblewrap around each poppler tool, Tesseract per
 * page), so this was a large part of a worker's own processor time.
 *
 * The launcher starts with the first program and is restarted after it ends; each program is the
 * leader of its own process group, which its caller watches (cpu-watch.ts) and kills by its pid as
 * before. If the launcher dies, every program it started is killed and closes as killed by SIGKILL
 * (a transient failure to the callers); if this process dies, the launcher kills them and exits.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath } from "node:url";

const LAUNCHER = fileURLToPath(new URL("./launcher-process.mjs", import.meta.url));

/** What launcher-process.mjs sends back for a run. */
type LauncherMessage =
  | { t: "spawn"; id: number; pid: number }
  | { t: "data"; id: number; fd: 1 | 2; d: Uint8Array }
  | { t: "error"; id: number; error: { message: string; code?: string; errno?: number; syscall?: string; path?: string } }
  | { t: "close"; id: number; code: number | null; signal: NodeJS.Signals | null };

/**
 * A program's stdout or stderr as it arrives, to one listener: as bytes, or as UTF-8 text. What
 * comes before a listener is kept for it, as a pipe would keep it.
 */
export class LaunchedOutput {
  private listener: ((bytes: Buffer) => void) | undefined;
  private early: Buffer[] = [];

  onBytes(listener: (bytes: Buffer) => void): void {
    this.listener = listener;
    const early = this.early;
    this.early = [];
    for (const bytes of early) listener(bytes);
  }

  onText(listener: (text: string) => void): void {
    const decoder = new StringDecoder("utf8");
    this.onBytes((bytes) => {
      const text = decoder.write(bytes);
      if (text.length > 0) listener(text);
    });
    this.endText = () => {
      const rest = decoder.end();
      if (rest.length > 0) listener(rest);
    };
  }

  /** @internal */
  push(bytes: Buffer): void {
    if (this.listener) this.listener(bytes);
    else this.early.push(bytes);
  }

  /** @internal A character split across the last chunks. */
  endText: () => void = () => undefined;
}

/**
 * A program started through the launcher, with the events of a ChildProcess that its callers use:
 * "spawn" (its `pid` is known from then on), "error" (it could not be started), "close" (last).
 */
export class LaunchedProgram extends EventEmitter<{ spawn: []; error: [NodeJS.ErrnoException]; close: [number | null, NodeJS.Signals | null] }> {
  pid: number | undefined;
  readonly stdout = new LaunchedOutput();
  readonly stderr = new LaunchedOutput();
  closed = false;
}

export interface LaunchCommand {
  file: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
}

interface Launcher {
  proc: ChildProcess;
  runs: Map<number, LaunchedProgram>;
}

let launcher: Launcher | undefined;
let nextId = 1;

function close(program: LaunchedProgram, code: number | null, signal: NodeJS.Signals | null): void {
  if (program.closed) return;
  program.closed = true;
  program.stdout.endText();
  program.stderr.endText();
  program.emit("close", code, signal);
}

function startLauncher(): Launcher {
  // No inherited flags or environment: it is plain JavaScript and passes each program its own.
  const proc = spawn(process.execPath, [LAUNCHER], { stdio: ["ignore", "ignore", "inherit", "ipc"], serialization: "advanced", env: {} });
  const l: Launcher = { proc, runs: new Map() };
  proc.on("message", (m: LauncherMessage) => {
    const program = l.runs.get(m.id);
    if (!program) return;
    switch (m.t) {
      case "spawn":
        program.pid = m.pid;
        program.emit("spawn");
        break;
      case "data": {
        const bytes = Buffer.from(m.d.buffer, m.d.byteOffset, m.d.byteLength);
        (m.fd === 1 ? program.stdout : program.stderr).push(bytes);
        break;
      }
      case "error":
        program.emit("error", Object.assign(new Error(m.error.message), m.error) as NodeJS.ErrnoException);
        break;
      case "close":
        l.runs.delete(m.id);
        if (l.runs.size === 0) hold(l, false);
        close(program, m.code, m.signal);
        break;
    }
  });
  const gone = () => {
    if (launcher === l) launcher = undefined;
    for (const program of l.runs.values()) {
      if (program.pid !== undefined) {
        try {
          process.kill(-program.pid, "SIGKILL");
        } catch {
          // ended meanwhile
        }
      }
      close(program, null, "SIGKILL");
    }
    l.runs.clear();
  };
  proc.on("exit", gone);
  proc.on("error", gone);
  hold(l, false);
  return l;
}

/** Holds this process open while a program runs (as its pipes would), so that the launcher's end is seen. */
function hold(l: Launcher, yes: boolean): void {
  if (yes) {
    l.proc.ref();
    l.proc.channel?.ref();
  } else {
    l.proc.unref();
    l.proc.channel?.unref();
  }
}

/** Starts `command` as the leader of a process group of its own, its stdin closed. */
export function launch(command: LaunchCommand): LaunchedProgram {
  const l = (launcher ??= startLauncher());
  const program = new LaunchedProgram();
  const id = nextId++;
  l.runs.set(id, program);
  hold(l, true);
  l.proc.send({ t: "run", id, file: command.file, args: command.args, env: command.env }, (err) => {
    // The launcher ended before it got the run: closed as if killed, which callers retry.
    if (err) {
      l.runs.delete(id);
      close(program, null, "SIGKILL");
    }
  });
  return program;
}

/** The launcher's pid, for tests (undefined before the first program and after it ended). */
export function launcherPid(): number | undefined {
  return launcher?.proc.pid;
}
