import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { compiledEntry } from "../../bin/compiled.js";
import { isAlive } from "../helpers/live-process.ts";
import { PROJECT_ROOT } from "../helpers/paths.ts";

/** The compiled start (issue 13 item 6) and the roles' loading (item 2): how processes start and stop. */

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempDir(prefix: string, under = tmpdir()): Promise<string> {
  const d = await mkdtemp(join(under, prefix));
  dirs.push(d);
  return d;
}

function output(child: ChildProcess): { text(): string; waitFor(re: RegExp, ms: number): Promise<RegExpExecArray> } {
  let text = "";
  child.stdout?.on("data", (c: Buffer) => (text += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (text += c.toString()));
  return {
    text: () => text,
    async waitFor(re, ms) {
      const deadline = Date.now() + ms;
      for (;;) {
        const m = re.exec(text);
        if (m) return m;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`process ended before ${re}:\n${text}`);
        if (Date.now() > deadline) throw new Error(`no ${re} within ${ms} ms:\n${text}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** Every live process below `root`, from /proc (pid -> parent pid). */
function descendants(root: number): Array<{ pid: number; cmd: string }> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: Array<{ pid: number; cmd: string }> = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    found.push({ pid, cmd: cmdline(pid) });
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}

test("a SIGTERM to the `npm start` process alone stops the server, its worker and LibreOffice", { timeout: 150_000 }, async () => {
  const data = await tempDir("quire-npm-start-");
  // detached: the test signals npm's pid only, as a supervisor that knows one PID does.
  const npm = spawn("npm", ["start"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, QUIRE_DATA_DIR: data, QUIRE_PORT: "0", QUIRE_LOG_LEVEL: "warn", QUIRE_OFFICE_SLOTS: "1", QUIRE_WORKER_CONCURRENCY: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const out = output(npm);
  const exited = new Promise<void>((r) => npm.once("exit", () => r()));
  let tree: Array<{ pid: number; cmd: string }> = [];
  try {
    await out.waitFor(/Quire listening on/, 60_000);
    // Wait until the worker has its LibreOffice, the deepest part of the tree.
    const deadline = Date.now() + 90_000;
    while (!descendants(npm.pid!).some((p) => p.cmd.includes("soffice"))) {
      assert.ok(Date.now() < deadline, `no LibreOffice under npm start:\n${out.text()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    tree = descendants(npm.pid!);
    assert.ok(tree.some((p) => p.cmd.includes("serve")) && tree.some((p) => p.cmd.includes("worker")), JSON.stringify(tree));

    process.kill(npm.pid!, "SIGTERM");
    await exited;
    const stopBy = Date.now() + 60_000;
    let left = tree.filter((p) => isAlive(p.pid));
    while (left.length > 0 && Date.now() < stopBy) {
      await new Promise((r) => setTimeout(r, 200));
      left = left.filter((p) => isAlive(p.pid));
    }
    assert.deepEqual(left, [], "processes left running after npm start got SIGTERM");
  } finally {
    // Whatever happened, nothing of this test outlives it (orphans included: they hold its pipes).
    for (const p of [...tree, ...descendants(npm.pid!)]) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    if (npm.exitCode === null) npm.kill("SIGKILL");
  }
});

test("a `quire worker` process loads nothing of the HTTP API, the web pages or Fastify", { timeout: 120_000 }, async () => {
  const data = await tempDir("quire-worker-loads-");
  const loaded = join(data, "loaded.txt");
  const worker = spawn(
    process.execPath,
    ["--import", "tsx", "--import", "./test/helpers/record-loads.mjs", "src/cli/main.ts", "worker"],
    {
      cwd: PROJECT_ROOT,
      env: { ...process.env, QUIRE_DATA_DIR: data, QUIRE_TEST_LOADED_MODULES: loaded, QUIRE_OFFICE_SLOTS: "1", QUIRE_WORKER_CONCURRENCY: "1", QUIRE_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const out = output(worker);
  try {
    await out.waitFor(/"msg":"worker started"/, 90_000);
  } finally {
    worker.kill("SIGTERM");
    await new Promise((r) => worker.once("exit", r));
  }
  const urls = (await readFile(loaded, "utf8")).split("\n").filter(Boolean);
  const src = pathToFileURL(join(PROJECT_ROOT, "src")).href;
  const ours = urls.filter((u) => u.startsWith(`${src}/`)).map((u) => u.slice(src.length + 1));
  assert.ok(ours.some((u) => u.startsWith("jobs/")), "the recorder saw the worker's own modules");
  assert.deepEqual(ours.filter((u) => u.startsWith("api/") || u.startsWith("web/")), []);
  assert.deepEqual(urls.filter((u) => u.includes("/node_modules/fastify/") || u.includes("/node_modules/@fastify/")), []);
});

test("the compiled build runs every command without TypeScript: help, accounts, serve with its assets", { timeout: 180_000 }, async () => {
  // The dist/ that `npm ci` built (its prepare script runs scripts/build.mjs) when it is the build
  // of these sources, as `quire` itself judges (bin/compiled.js): in CI and in a fresh checkout the
  // build is then not paid twice (about 12 s of processor time). Else a build of its own, beside the
  // project (packages resolve from its node_modules), not over dist/, which other tests may be running.
  const compiled = compiledEntry(PROJECT_ROOT);
  let out = dirname(dirname(compiled.entry));
  if (!compiled.fresh) {
    await mkdir(join(PROJECT_ROOT, ".tmp"), { recursive: true });
    out = await tempDir("dist-test-", join(PROJECT_ROOT, ".tmp"));
    const built = spawnSync(process.execPath, ["scripts/build.mjs", "--out-dir", out], { cwd: PROJECT_ROOT, encoding: "utf8" });
    assert.equal(built.status, 0, built.stdout + built.stderr);
  }
  const main = join(out, "cli", "main.js");
  const data = await tempDir("quire-compiled-");
  const env = { ...process.env, QUIRE_DATA_DIR: data, QUIRE_LOG_LEVEL: "warn" };

  const help = spawnSync(process.execPath, [main, "--help"], { env, encoding: "utf8" });
  assert.equal(help.status, 0);
  assert.match(help.stderr, /usage: quire <command>/);

  const created = spawnSync(process.execPath, [main, "accounts", "create", "alice"], { env, encoding: "utf8" });
  assert.equal(created.status, 0, created.stderr);
  assert.match(created.stdout, /apiKey/);

  const serve = spawn(process.execPath, [main, "serve", "--no-worker"], { env: { ...env, QUIRE_PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
  const served = output(serve);
  try {
    const [, base] = await served.waitFor(/Quire listening on (http:\/\/[^\s]+)/, 60_000);
    // The reader's files are read next to the compiled code: the build must have copied them.
    const page = await fetch(`${base}/alice`);
    assert.equal(page.status, 200);
    const css = /href="([^"]+\.css)"/.exec(await page.text())?.[1];
    assert.ok(css, "the profile page links its stylesheet");
    assert.equal((await fetch(new URL(css, base))).status, 200);
  } finally {
    serve.kill("SIGTERM");
    await new Promise((r) => serve.once("exit", r));
  }
  // The UNO helper is read next to the compiled office slot.
  assert.ok(readdirSync(join(out, "convert")).includes("uno-convert.py"));
});
