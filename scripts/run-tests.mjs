#!/usr/bin/env node
// Runs every test file under test/ with Node's own runner, through test-files.mjs so that the
// files start in the order chosen here; they run in parallel processes, two more at a time than
// the machine has cores (QUIRE_TEST_CONCURRENCY sets another number). The TypeScript is compiled once first (compile-tests.mjs) and the
// files run as plain JavaScript; QUIRE_TEST_TSX=1 runs them through tsx instead. Prints each
// file's wall and CPU time at the end (the spec reporter only times tests and suites).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { compileForTests, OUT, twinOf } from "./compile-tests.mjs";

/**
 * The longest files, longest first (wall time in a full run on 2 cores): started first, so that no
 * long one runs on alone at the end while the other core idles. Every other file follows in name
 * order. A path missing here is harmless; refresh the list from the times a full run prints.
 * The three that convert most (pipeline-e2e, database-outage, cluster) are kept apart: started
 * together, on a slow day each waited out its time limit behind the others' LibreOffice and
 * Tesseract (one-page conversions took 8-13 s instead of about 1 s).
 */
const LONGEST_FIRST = [
  "test/system/pipeline-e2e.test.ts",
  "test/web/reader-browser.test.ts",
  "test/convert/office-to-pdf.test.ts",
  "test/web/statistics-counting.test.ts",
  "test/web/app-browser.test.ts",
  "test/jobs/converter-stall.test.ts",
  "test/web/comments-browser.test.ts",
  "test/web/comments-security.test.ts",
  "test/system/hostile-files.test.ts",
  "test/convert/office-macros.test.ts",
  "test/system/crash-worker-conversions.test.ts",
  "test/system/database-outage.test.ts",
  "test/system/pipeline-url.test.ts",
  "test/cli/start.test.ts",
  "test/system/fanout-crash.test.ts",
  "test/system/fuzz-upload-truncation.test.ts",
  "test/system/architecture-boundaries.test.ts",
  "test/web/app-folders-browser.test.ts",
  "test/system/fuzz-api-requests.test.ts",
  "test/web/app-upload-browser.test.ts",
  "test/cli/commands.test.ts",
  "test/convert/pdf-pages.test.ts",
  "test/system/fairness-accounts.test.ts",
  "test/system/compose-example.test.ts",
  "test/api/documents-delete.test.ts",
  "test/jobs/worker.test.ts",
  "test/system/load-concurrent-uploads.test.ts",
  "test/jobs/worker-sandbox.test.ts",
  "test/web/large-text.test.ts",
  "test/system/cluster.test.ts",
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
const rank = (f) => (LONGEST_FIRST.includes(f) ? LONGEST_FIRST.indexOf(f) : LONGEST_FIRST.length);
files.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));

const viaTsx = process.env.QUIRE_TEST_TSX === "1";
let run = files;
let loader = ["--import", "tsx"];
if (!viaTsx) {
  const t = Date.now();
  const { compiled } = await compileForTests(process.cwd());
  console.log(`compiled ${compiled} changed TypeScript files in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  run = files.map((f) => relative(process.cwd(), twinOf(process.cwd(), join(process.cwd(), f))));
  loader = [];
}

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
console.log(`\nwall and CPU time of the longest test files (${times.length} timed, ${files.length} run, ${concurrency} at a time; CPU of ${counted}):`);
for (const [s, cpu, f] of shown) console.log(`${s.toFixed(1).padStart(8)} s ${cpu.toFixed(1).padStart(8)} s CPU  ${f}`);
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
