import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { childrenOf } from "../test/helpers/live-process.ts";

/** The shared fixtures, used in place. */
export const FIXTURES = fileURLToPath(new URL("../../shared/fixtures/", import.meta.url));

/** Runs a program to its end; rejects with the start of its stderr when it fails. */
export function exec(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err.slice(0, 300)}`))));
  });
}

/**
 * CPU seconds used so far by this process and by the children it has waited for (poppler, soffice):
 * on a machine shared with other work, wall time says how busy the machine was, this says what the
 * measured work itself cost.
 */
export function cpuSeconds(): number {
  const own = process.cpuUsage();
  // /proc/self/stat: fields 16 and 17 (cutime, cstime) in clock ticks, after the ")" that ends the name.
  const fields = readFileSync("/proc/self/stat", "utf8").split(")").pop()?.trim().split(" ") ?? [];
  const children = (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  return (own.user + own.system) / 1e6 + (Number.isFinite(children) ? children : 0);
}

/** sysconf(_SC_CLK_TCK): 100 on every Linux build Node runs on. */
const CLOCK_TICKS = 100;

/** CPU seconds another process has used so far, every thread of it (utime and stime of /proc/<pid>/stat). */
export function cpuSecondsOf(pid: number): number {
  // Fields 14 and 15 of stat(5), 12 and 13 after the ")" that ends the name.
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop()!.trim().split(" ");
  return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
}

/** cpuSecondsOf a process and every process it started that still runs (a server and its statistics writer). */
export function cpuSecondsOfTree(pid: number): number {
  let sum = cpuSecondsOf(pid);
  for (const child of childrenOf(pid)) {
    try {
      sum += cpuSecondsOfTree(child);
    } catch {
      // Ended meanwhile.
    }
  }
  return sum;
}
