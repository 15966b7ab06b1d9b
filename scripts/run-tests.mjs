#!/usr/bin/env node
// Runs every test file under test/ with Node's own runner, through test-files.mjs so that the
// files start in the order chosen here; the heavy files each in a process of their own (ALONE), the
// others in groups of files that share one process; the processes run in parallel, two more at a
// time than the machine has cores (QUIRE_TEST_CONCURRENCY sets another number). The TypeScript is
// compiled once first (compile-tests.mjs) and the files run as plain JavaScript; QUIRE_TEST_TSX=1
// runs them through tsx instead. Prints each file's (or group's) wall and CPU time at the end (the
// spec reporter only times tests and suites).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { compileForTests, OUT, twinOf } from "./compile-tests.mjs";

/** Files a group holds at most; QUIRE_TEST_GROUP_SIZE=1 runs every file in a process of its own. */
const GROUP_SIZE = Math.max(1, Math.floor(Number(process.env.QUIRE_TEST_GROUP_SIZE)) || 10);
const GROUPS_DIR = ".tmp/test-groups";
/**
 * Files that run in a process of their own, longest first (wall time in a full run on 2 cores, 28
 * November): the heavy ones (about 10 CPU-s or 25 s or more in a full run: the longer browser files,
 * conversions, most fuzz tests), sandboxed-run, whose limits are judged by processor time, and
 * office-sandbox, which sets process.env for its whole process. The lighter browser files and crash
 * tests joined the groups later that day (23 files: full runs 382 -> 366 s, 695 -> 663 CPU-s).
 * Every other file runs in a group (writeGroups): a file that starts a server pays about 1.7 CPU-s
 * before its first assertion (loading some 580 modules, the first server's warm-up, its statistics
 * writer), which a group pays once. Side by side on 2 cores (28 November): the 85 lightest files
 * took 199-210 CPU-s one to a process and 110-118 in groups of 10; the 24 next, 179 and 145-155.
 * A path missing here is harmless; refresh the list from the times a full run prints.
 * They start first, the longest first, so that no long one runs on alone at the end while the
 * other core idles; the groups follow. (With 46 files here, the groups dealt in turn among the
 * last 16 of them ran faster than all at the end; with these 23, starting the groups among the
 * last 11 took 373 s against 366.)
 * The three that convert most (pipeline-e2e, database-outage, cluster) are kept apart: started
 * together, on a slow day each waited out its time limit behind the others' LibreOffice and
 * Tesseract (one-page conversions took 8-13 s instead of about 1 s).
 */
const ALONE = [
  "test/system/pipeline-e2e.test.ts",
  "test/web/reader-browser.test.ts",
  "test/api/replace-file.test.ts",
  "test/web/app-ux-browser.test.ts",
  "test/web/comments-security.test.ts",
  "test/jobs/page-variants.test.ts",
  "test/system/hostile-files.test.ts",
  "test/jobs/converter-stall.test.ts",
  "test/cli/commands.test.ts",
  "test/web/app-browser.test.ts",
  "test/system/database-outage.test.ts",
  "test/system/fuzz-upload-truncation.test.ts",
  "test/web/reader-layout-browser.test.ts",
  "test/system/crash-worker-conversions.test.ts",
  "test/convert/pdf-pages.test.ts",
  "test/convert/office-to-pdf.test.ts",
  "test/system/architecture-boundaries.test.ts",
  "test/cli/start.test.ts",
  "test/system/fuzz-api-requests.test.ts",
  "test/system/cluster.test.ts",
  "test/convert/office-macros.test.ts",
  "test/convert/sandboxed-run.test.ts",
  "test/convert/office-sandbox.test.ts",
];

const filter = process.argv.slice(2);
const files = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith(".test.ts") && (filter.length === 0 || filter.some((f) => p.includes(f)))) files.push(p);
  }
};
walk("test");
const alone = files.filter((f) => ALONE.includes(f)).sort((a, b) => ALONE.indexOf(a) - ALONE.indexOf(b));
const grouped = files.filter((f) => !ALONE.includes(f)).sort();
if (GROUP_SIZE === 1) alone.push(...grouped.splice(0));

const viaTsx = process.env.QUIRE_TEST_TSX === "1";
let twin = (f) => f;
let loader = ["--import", "tsx"];
if (!viaTsx) {
  const t = Date.now();
  const { compiled } = await compileForTests(process.cwd());
  console.log(`compiled ${compiled} changed TypeScript files in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  twin = (f) => relative(process.cwd(), twinOf(process.cwd(), join(process.cwd(), f)));
  loader = [];
}
const groups = writeGroups(grouped, twin);
const run = [...alone.map(twin), ...groups.keys()];

// Two more files than cores: many files spend part of their time waiting (a 30 s database outage,
// a converter's time limit, PostgreSQL, a browser), and with one more than cores the machine's
// processors were busy 1.74 of 2 on average. On 2 cores, 27 November: 547 s with 3 at a time, 489 s
// with 4, every test passing (the second run's dist/ was also fresh, so its `quire` processes did
// not load tsx: 900 CPU-s against 950).
const concurrency = process.env.QUIRE_TEST_CONCURRENCY ?? String(availableParallelism() + 2);
const timesDir = mkdtempSync(join(tmpdir(), "quire-test-times-"));
const timesFile = join(timesDir, "times.tsv");
const started = Date.now();
const treeFile = join(timesDir, "tree-cpu.tsv");
const suite = [process.execPath, ...loader, "--import", "./scripts/test-file-timer.mjs", "scripts/test-files.mjs", ...run];
// A cpuacct group for the run where this machine has one and we may make it (cgroup v1, root):
// this process joins it, so every process of the run is counted there, and each file's process
// moves into a group of its own below it (test-file-timer.mjs), so that a file's CPU counts what
// its sandboxed converters used too. Rusage cannot: a process killed with its sandbox's PID
// namespace is reaped by no one here, and its CPU reaches no parent's children-time.
const CPUACCT = "/sys/fs/cgroup/cpuacct";
let cgroup;
try {
  cgroup = join(CPUACCT, `quire-tests-${process.pid}`);
  mkdirSync(cgroup);
  writeFileSync(join(cgroup, "cgroup.procs"), String(process.pid));
} catch {
  cgroup = undefined;
}
// Thread and child entries start from the compiled twins too (src/thread-boot.mjs), not through tsx.
const twins = viaTsx ? {} : { QUIRE_TEST_TWINS: join(process.cwd(), OUT) };
const env = { ...process.env, ...twins, QUIRE_TEST_CONCURRENCY: concurrency, QUIRE_TEST_TIMES: timesFile, ...(cgroup ? { QUIRE_TEST_CGROUP: cgroup } : {}) };
// Under cpu-of-tree.py where Python runs and there is no group: its total counts the orphans that
// the per-file rusage misses (not those killed with a PID namespace).
const python = !cgroup && spawnSync("python3", ["-c", "import ctypes"], { stdio: "ignore" }).status === 0;
const result = python
  ? spawnSync("python3", ["scripts/cpu-of-tree.py", treeFile, ...suite], { stdio: "inherit", env })
  : spawnSync(suite[0], suite.slice(1), { stdio: "inherit", env });
const wall = (Date.now() - started) / 1000;

let times = [];
try {
  times = readFileSync(timesFile, "utf8").trim().split("\n").filter(Boolean).map((l) => l.split("\t")).map(([ms, cpu, f]) => [Number(ms) / 1000, Number(cpu) / 1000, f]);
} catch {
  // no file finished
}
let tree;
try {
  if (cgroup) {
    const left = readdirSync(cgroup, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .reduce((n, e) => n + readFileSync(join(cgroup, e.name, "cgroup.procs"), "utf8").split("\n").filter(Boolean).length, 0);
    tree = { cpu: Number(readFileSync(join(cgroup, "cpuacct.usage"), "utf8")) / 1e9, left };
  } else {
    const [cpu, left] = readFileSync(treeFile, "utf8").trim().split("\t").map(Number);
    tree = { cpu, left };
  }
} catch {
  // not measured (no group, no Python)
}
rmSync(timesDir, { recursive: true, force: true });
if (cgroup) removeGroups(cgroup);
times.sort((a, b) => b[0] - a[0]);
// Every file with QUIRE_TEST_TIMES_ALL=1; the CPU column counts every process the file started
// where the run has a cpuacct group, else the file's processes and their reaped children.
const shown = process.env.QUIRE_TEST_TIMES_ALL === "1" ? times : times.slice(0, 20);
const cpuTotal = times.reduce((sum, t) => sum + t[1], 0);
const counted = cgroup ? "every process each file started" : "each file's processes and the children they reaped";
console.log(`\nwall and CPU time of the longest test files (${files.length} files in ${run.length} processes: ${alone.length} alone, ${grouped.length} in ${groups.size} groups of about ${GROUP_SIZE}; ${times.length} timed, ${concurrency} at a time; CPU of ${counted}):`);
for (const [s, cpu, f] of shown) {
  const members = groups.get(f);
  console.log(`${s.toFixed(1).padStart(8)} s ${cpu.toFixed(1).padStart(8)} s CPU  ${members ? `${f}: ${members.join(", ")}` : f}`);
}
console.log(`${wall.toFixed(1).padStart(8)} s ${cpuTotal.toFixed(1).padStart(8)} s CPU  in all`);
// The run's group, or cpu-of-tree.py's count: the runner and the compile too.
if (tree) console.log(`${"".padStart(10)} ${tree.cpu.toFixed(1).padStart(8)} s CPU  in all, every process of the run${tree.left > 0 ? ` (${tree.left} still running at the end)` : ""}`);
process.exit(result.status ?? 1);

/** Removes the run's groups; a process still in one (a leak) goes back to the root group first. */
function removeGroups(parent) {
  try {
    writeFileSync(join(CPUACCT, "cgroup.procs"), String(process.pid));
  } catch {
    // rmdir below fails and says nothing
  }
  for (const e of readdirSync(parent, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const group = join(parent, e.name);
    try {
      for (const pid of readFileSync(join(group, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
        try {
          writeFileSync(join(CPUACCT, "cgroup.procs"), pid);
        } catch {
          // ended meanwhile
        }
      }
      rmdirSync(group);
    } catch {
      // left for the machine's next boot
    }
  }
  try {
    rmdirSync(parent);
  } catch {
    // a group left above
  }
}

/**
 * Deals `files` in turn into groups of about GROUP_SIZE (each a mix of the directories, so that
 * the groups cost about the same), and writes each group's entry under GROUPS_DIR: one process
 * that imports its files one after the other, each inside a suite named for it, so that a file's
 * top-level hooks stay its own (`before` runs before its own tests, `after` after them, as in a
 * process of its own) and its tests run after the previous file's. Its modules are evaluated
 * when the group starts, before its first file's tests. (Node 22's `--test-isolation=none` runs
 * files in one process; Node 20 has no such option.) Answers each entry's path with its files.
 */
function writeGroups(files, twin) {
  rmSync(GROUPS_DIR, { recursive: true, force: true });
  mkdirSync(GROUPS_DIR, { recursive: true });
  const count = Math.ceil(files.length / GROUP_SIZE);
  const dealt = Array.from({ length: count }, () => []);
  files.forEach((f, i) => dealt[i % count].push(f));
  const groups = new Map();
  dealt.forEach((members, i) => {
    const entry = join(GROUPS_DIR, `group-${i + 1}.test.mjs`);
    const imports = members.map((f) => [f, pathToFileURL(join(process.cwd(), twin(f))).href]);
    writeFileSync(entry, [
      "// Written by scripts/run-tests.mjs: test files run one after the other in this process.",
      'import { describe } from "node:test";',
      `for (const [file, url] of ${JSON.stringify(imports)}) describe(file, async () => { await import(url); });`,
      "",
    ].join("\n"));
    groups.set(entry, members);
  });
  return groups;
}
