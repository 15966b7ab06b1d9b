import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { OWNER_VARIABLE } from "./sandbox.ts";

/**
 * Each worker process gets LibreOffice folders of its own (profiles, scratch, soffice's temp):
 * several `quire worker` processes may share one QUIRE_DATA_DIR, and two soffice processes on one
 * profile hand their work to each other (single-instance pipe), while a starting worker empties
 * its scratch folder. The name carries host and pid, so a later worker on the same host can tell
 * a dead worker's folder (killed, so never cleaned up) from a live one's and remove it. Another
 * host (a container sharing the volume) is never judged: its pids mean nothing here.
 *
 * The same name marks the converters a worker starts (sandbox.ts puts it in the environment of the
 * outermost process of each), so a starting worker also ends what a dead one of this host left
 * running. Converters die with their worker anyway (bubblewrap's --die-with-parent); this is for
 * what escapes that: QUIRE_UNSAFE_NO_SANDBOX, where soffice's own children have no such tie.
 */
const PREFIX = "office-";
const NAME = /^office-(.+)-(\d+)-[0-9a-f]+$/;

export async function claimOfficeWorkDir(tmpDir: string): Promise<string> {
  const host = safeName(hostname());
  endOrphanConverters(host);
  await mkdir(tmpDir, { recursive: true });
  for (const name of await readdir(tmpDir)) {
    const m = NAME.exec(name);
    if (!m || m[1] !== host || isAlive(Number(m[2]))) continue;
    await rm(join(tmpDir, name), { recursive: true, force: true });
  }
  const dir = join(tmpDir, `${PREFIX}${host}-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** SIGKILLs every process (with its process group) that a dead worker of `host` started. */
export function endOrphanConverters(host = safeName(hostname())): number[] {
  const killed: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, "latin1");
    } catch {
      continue; // gone meanwhile, or another user's
    }
    const mark = environ.split("\0").find((v) => v.startsWith(`${OWNER_VARIABLE}=`));
    const m = mark && NAME.exec(mark.slice(OWNER_VARIABLE.length + 1));
    if (!m || m[1] !== host || isAlive(Number(m[2]))) continue;
    const pid = Number(entry);
    if (processGroupOf(pid) === pid) signal(-pid);
    signal(pid);
    killed.push(pid);
  }
  return killed;
}

function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function safeName(host: string): string {
  return host.replace(/[^A-Za-z0-9.]/g, "_") || "host";
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a process of another user holds the pid, so it is alive.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
