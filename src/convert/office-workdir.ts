import { randomBytes } from "node:crypto";
import { mkdir, readdir, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

/**
 * Each worker process gets LibreOffice folders of its own (profiles, scratch, soffice's temp):
 * several `quire worker` processes may share one QUIRE_DATA_DIR, and two soffice processes on one
 * profile hand their work to each other (single-instance pipe), while a starting worker empties
 * its scratch folder. The name carries host and pid, so a later worker on the same host can tell
 * a dead worker's folder (killed, so never cleaned up) from a live one's and remove it. Another
 * host (a container sharing the volume) is never judged: its pids mean nothing here.
 */
const PREFIX = "office-";

export async function claimOfficeWorkDir(tmpDir: string): Promise<string> {
  const host = safeName(hostname());
  await mkdir(tmpDir, { recursive: true });
  for (const name of await readdir(tmpDir)) {
    const m = /^office-(.+)-(\d+)-[0-9a-f]+$/.exec(name);
    if (!m || m[1] !== host || isAlive(Number(m[2]))) continue;
    await rm(join(tmpDir, name), { recursive: true, force: true });
  }
  const dir = join(tmpDir, `${PREFIX}${host}-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(dir, { recursive: true });
  return dir;
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
