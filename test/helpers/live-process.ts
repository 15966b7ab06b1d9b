import { readdirSync, readFileSync } from "node:fs";

/** Whether a process is running: it exists and is not a zombie (ended, not yet reaped). */
export function isAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}

/** The processes `pid` started that still run (the children of every thread of it, from /proc). */
export function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`)
    .flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
    .map(Number);
}

/** A process's command line, its arguments joined by NULs ("" once it has ended). */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}
