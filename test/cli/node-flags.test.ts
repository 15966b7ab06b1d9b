import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { NODE_FLAGS } from "../../bin/node-flags.js";
import { PROJECT_ROOT } from "../helpers/paths.ts";

/**
 * The flags Node.js runs Quire with (bin/node-flags.js) are the same wherever it starts, and V8
 * takes them: without the young generation's floor, a server that had been quiet collected garbage
 * three to seven times as often once traffic came back (docs/scaling.md, "Operating notes").
 */

const MiB = 1024 * 1024;
const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), "utf8");

test("the quire executable's first line, npm start, npm run quire and the image's ENTRYPOINT carry the same Node.js flags", () => {
  assert.ok(NODE_FLAGS.includes("--min-semi-space-size=16"));
  assert.equal(read("bin/quire.js").split("\n")[0], `#!/usr/bin/env -S node ${NODE_FLAGS.join(" ")}`);
  const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
  assert.equal(scripts.start, `exec node ${NODE_FLAGS.join(" ")} bin/quire.js serve`);
  assert.equal(scripts.quire, `exec node ${NODE_FLAGS.join(" ")} bin/quire.js`);
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(read("Dockerfile"))?.[1];
  assert.deepEqual(JSON.parse(entrypoint ?? "null"), ["node", ...NODE_FLAGS, "bin/quire.js"]);
});

test("the quire executable hands node its flags, and V8 starts the young generation at 16 MiB with them (at 1 MiB without)", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "quire-flags-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // The file itself, as a shell runs `quire serve`: its first line gives node the flags.
  const child = spawn(join(PROJECT_ROOT, "bin", "quire.js"), ["serve", "--no-worker"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, QUIRE_DATA_DIR: dir, QUIRE_PORT: "0", QUIRE_DEMO_ACCOUNT: "0", QUIRE_LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
  });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      if (/Quire listening on http:\/\//.test(out)) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`quire serve ended (${code}) before it listened:\n${out}`)));
  });
  // env(1) ran node in its own place: the listening process's arguments are node's.
  const args = readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0");
  assert.deepEqual(args.slice(1, 1 + NODE_FLAGS.length), [...NODE_FLAGS]);
  assert.equal(args[1 + NODE_FLAGS.length], join(PROJECT_ROOT, "bin", "quire.js"));

  // What V8 makes of them: the young generation's size as a process starts is its floor (V8
  // shrinks it no further when the process is quiet).
  const young = (flags: readonly string[]) =>
    Number(execFileSync(process.execPath, [...flags, "-e", `process.stdout.write(String(require("node:v8").getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size))`], { encoding: "utf8" }));
  const flagged = young(NODE_FLAGS);
  const plain = young([]);
  assert.ok(flagged >= 16 * MiB, `with the flags: ${flagged} bytes`);
  assert.ok(plain < 16 * MiB, `without: ${plain} bytes`);
});
