import { readFileSync } from "node:fs";

/** Whether a process is running: it exists and is not a zombie (ended, not yet reaped). */
export function isAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}
