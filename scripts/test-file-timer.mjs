// Loaded (--import) into every test file's process by run-tests.mjs when QUIRE_TEST_TIMES names a
// file: appends "<wall ms>\t<cpu ms>\t<test file>" to it when the process ends, so a run reports each
// file's own wall time (the spec reporter only times tests) and the CPU it cost. The CPU figure is
// the process's own plus that of every descendant reaped by then (servers, workers, LibreOffice,
// Tesseract, Chromium), read from /proc; on a system without /proc it is the process's own.
import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";

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

const out = process.env.QUIRE_TEST_TIMES;
const file = process.argv[1];
// A compiled twin (compile-tests.mjs) is named as its source.
const named = file && relative(process.cwd(), file).replace(/^\.tmp\/test-js\/(.*)\.js$/, "$1.ts");
if (out && named?.endsWith(".test.ts")) {
  process.once("exit", () => {
    appendFileSync(out, `${Math.round(performance.now())}\t${cpuMs()}\t${named}\n`);
  });
}
