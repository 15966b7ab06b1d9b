/**
 * Runs one short-lived converter program (poppler, Tesseract) that sandbox.ts has wrapped: its
 * stdout collected or streamed, stderr's head kept, killed on timeout or abort. What a run came to
 * is answered as an outcome; each caller says what that outcome means for a document.
 */
import { launch } from "./launcher.ts";
import { watchCpu, type CpuUsage } from "./cpu-watch.ts";
import type { SandboxedCommand } from "./sandbox.ts";

const STDERR_KEEP = 16 * 1024;

export interface RunLimits {
  /**
   * Processor time the program may use (cpu-watch.ts): past it, `timeout`. It may take up to
   * WALL_ALLOWANCE times this on the clock while it keeps using the processor; a program that uses
   * none for the stall window, or runs out of that wall time, is killed as `stalled`.
   */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Receives stdout as text as it arrives, so long outputs need not be held whole. */
  onStdout?: (chunk: string) => void;
  /** Collected stdout beyond this many bytes kills the program (`too-long`). */
  maxStdoutBytes?: number;
  /**
   * Sees stderr as it arrives (a program's progress reports, e.g. pdftoppm -progress). Calling
   * `restartTimeout` starts the `timeoutMs` count again: for a program that reports steady progress
   * through a long task, the limit is then on each step rather than on the whole.
   */
  onStderr?: (chunk: string, restartTimeout: () => void) => void;
}

export type RunOutcome =
  | { kind: "exited"; code: number; stdout: string; stderr: string }
  | { kind: "killed"; signal: NodeJS.Signals | null; stderr: string }
  | { kind: "timeout" }
  /** Held back by something outside it: stopped (SIGSTOP), or starved by a busy machine. Worth another try. */
  | { kind: "stalled"; why: "stalled" | "starved"; usage: CpuUsage }
  | { kind: "too-long" }
  | { kind: "not-started"; error: NodeJS.ErrnoException };

/** Rejects only with the abort signal's reason; everything else is an outcome. */
export function runSandboxed(command: SandboxedCommand, limits: RunLimits): Promise<RunOutcome> {
  return new Promise((resolve, reject) => {
    if (limits.signal?.aborted) {
      reject(limits.signal.reason);
      return;
    }
    // A process group of its own, killed whole: a kill that lands while bubblewrap is still setting
    // up (before its parent-death signal is armed) must reach the program inside too. Started by
    // the launcher (launcher.ts): a fork of this process would cost as much as it holds.
    const child = launch(command);
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = "";
    let ended: "timeout" | "too-long" | "aborted" | "stalled" | undefined;
    let stalled: { why: "stalled" | "starved"; usage: CpuUsage } | undefined;
    let spawnError: NodeJS.ErrnoException | undefined;
    const kill = (why: typeof ended) => {
      ended ??= why;
      if (child.pid === undefined) return; // killed as it starts, below
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };

    if (limits.onStdout) child.stdout.onText(limits.onStdout);
    else {
      child.stdout.onBytes((d) => {
        outBytes += d.length;
        if (limits.maxStdoutBytes !== undefined && outBytes > limits.maxStdoutBytes) kill("too-long");
        else out.push(d);
      });
    }
    // The process group: what bubblewrap starts inside its sandbox stays in it.
    const group: number[] = [];
    child.on("spawn", () => {
      group.push(child.pid!);
      if (ended) kill(ended);
    });
    const watch = watchCpu(() => group, { limitMs: limits.timeoutMs }, (verdict, usage) => {
      if (verdict === "too-slow") return kill("timeout");
      stalled = { why: verdict, usage };
      kill("stalled");
    });
    const restartTimeout = () => {
      if (!ended) watch.restart();
    };
    child.stderr.onText((d) => {
      if (stderr.length < STDERR_KEEP) stderr += d;
      limits.onStderr?.(d, restartTimeout);
    });
    const onAbort = () => kill("aborted");
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (e: NodeJS.ErrnoException) => {
      spawnError = e;
    });
    child.on("close", (code, sig) => {
      watch.stop();
      limits.signal?.removeEventListener("abort", onAbort);
      if (ended === "aborted") return reject(limits.signal?.reason);
      if (ended === "timeout" || ended === "too-long") return resolve({ kind: ended });
      if (ended === "stalled" && stalled) return resolve({ kind: "stalled", ...stalled });
      if (spawnError) return resolve({ kind: "not-started", error: spawnError });
      if (code === null) return resolve({ kind: "killed", signal: sig, stderr });
      resolve({ kind: "exited", code, stdout: Buffer.concat(out).toString("utf8"), stderr });
    });
  });
}
