import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, test } from "node:test";
import { claimOfficeWorkDir } from "../../src/convert/office-workdir.ts";
import { OWNER_VARIABLE } from "../../src/convert/sandbox.ts";

/**
 * Several `quire worker` processes may share a data folder: each must get LibreOffice folders of
 * its own (one profile used by two soffice processes hands conversions from one to the other), and
 * what a killed worker left must go without touching a live worker's or another host's.
 */

const dir = await mkdtemp(join(tmpdir(), "quire-officedir-"));
after(() => rm(dir, { recursive: true, force: true }));
const host = hostname().replace(/[^A-Za-z0-9.]/g, "_");

test("every claim is a folder of its own, named for this host and process", async () => {
  const a = await claimOfficeWorkDir(dir);
  const b = await claimOfficeWorkDir(dir);
  assert.notEqual(a, b);
  for (const d of [a, b]) assert.match(basename(d), new RegExp(`^office-${host.replace(/\./g, "\\.")}-${process.pid}-[0-9a-f]+$`));
});

test("a dead worker's folder on this host goes; a live one's and another host's stay", async () => {
  const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
  const deadDir = join(dir, `office-${host}-${dead}-0badc0de`);
  const liveDir = join(dir, `office-${host}-${process.ppid}-0badc0de`);
  const otherHostDir = join(dir, `office-elsewhere-${dead}-0badc0de`);
  const unrelated = join(dir, "convert-123");
  for (const d of [deadDir, liveDir, otherHostDir, unrelated]) await mkdir(join(d, "profiles"), { recursive: true });
  const mine = await claimOfficeWorkDir(dir);
  const left = new Set(await readdir(dir));
  assert.ok(!left.has(basename(deadDir)), "the dead worker's folder is removed");
  for (const d of [liveDir, otherHostDir, unrelated, mine]) assert.ok(left.has(basename(d)), `${basename(d)} stays`);
});

test("a starting worker ends the converters a dead worker of this host left, and no one else's", async () => {
  const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
  // Stand-ins for converters, marked as sandbox.ts marks the outermost process of each.
  const start = (owner: string) => {
    const child = spawn("sleep", ["120"], { detached: true, stdio: "ignore", env: { PATH: "/usr/bin:/bin", [OWNER_VARIABLE]: owner } });
    const exited = new Promise<string | number | null>((resolve) => child.once("exit", (code, sig) => resolve(sig ?? code)));
    return { child, exited };
  };
  const orphan = start(`office-${host}-${dead}-0badc0de`);
  const live = start(`office-${host}-${process.pid}-0badc0de`);
  const otherHost = start(`office-elsewhere-${dead}-0badc0de`);
  try {
    await claimOfficeWorkDir(dir);
    assert.equal(await orphan.exited, "SIGKILL", "the dead worker's converter is killed");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(live.child.exitCode ?? live.child.signalCode, null, "a live worker's converter stays");
    assert.equal(otherHost.child.exitCode ?? otherHost.child.signalCode, null, "another host's stays");
  } finally {
    for (const p of [orphan, live, otherHost]) p.child.kill("SIGKILL");
  }
});
