// Loaded (--import) into every test file's process by run-tests.mjs when QUIRE_TEST_TIMES names a
// file: appends "<wall ms>\t<cpu ms>\t<test file>" to it when the process ends, so a run reports each
// file's own wall time (the spec reporter only times tests) and the CPU it cost.
// The CPU figure: when run-tests.mjs made a cpuacct cgroup for the run (QUIRE_TEST_CGROUP, as root
// on a cgroup v1 machine), the file's process moves into a group of its own at start and the
// figure is that group's, which counts every process the file started, sandboxed converters
// included (bubblewrap does not wait for them, so no process here reaps them). Otherwise it is the
// process's own plus that of every descendant reaped by then, read from /proc; on a system
// without /proc it is the process's own.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

// Linux reports these in clock ticks, 100 a second on every architecture Node runs on.
const TICK_MS = 10;

function cpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime, stime, cutime, cstime: fields 14-17 of stat(5), 12-15 after the name and state.
    return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) * TICK_MS;
  } catch {
    const { userCPUTime, systemCPUTime } = process.resourceUsage();
    return (userCPUTime + systemCPUTime) / 1000;
  }
}

/** Moves this process into a cpuacct group of its own under `parent`; answers the group, or undefined. */
function ownGroup(parent) {
  if (!parent) return undefined;
  try {
    const group = join(parent, String(process.pid));
    mkdirSync(group);
    // cgroup.procs moves every thread of the process (tasks would move only the one named).
    writeFileSync(join(group, "cgroup.procs"), String(process.pid));
    return group;
  } catch {
    return undefined;
  }
}

const out = process.env.QUIRE_TEST_TIMES;
const file = process.argv[1];
// A compiled twin (compile-tests.mjs) is named as its source.
const named = file && relative(process.cwd(), file).replace(/^\.tmp\/test-js\/(.*)\.js$/, "$1.ts");
// A group of files (run-tests.mjs writes them) is timed as one.
if (out && (named?.endsWith(".test.ts") || named?.endsWith(".test.mjs"))) {
  const group = ownGroup(process.env.QUIRE_TEST_CGROUP);
  const before = group ? cpuMs() : 0;
  process.once("exit", () => {
    let cpu = cpuMs();
    if (group) {
      try {
        // What ran before the move (loading this module) is counted from /proc.
        cpu = before + Number(readFileSync(join(group, "cpuacct.usage"), "utf8")) / 1e6;
      } catch {
        // the /proc figure
      }
    }
    appendFileSync(out, `${Math.round(performance.now())}\t${Math.round(cpu)}\t${named}\n`);
  });
}
