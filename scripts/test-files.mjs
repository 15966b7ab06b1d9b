// Runs the test files named on the command line with Node's own runner, in the order given, and
// prints the spec reporter's output and summary. run-tests.mjs starts it: `node --test` sorts
// the files by name, so the longest ones, which are mostly under test/system/, would start last and
// run on alone while the other core idles; the runner's API keeps the order. The files' processes
// inherit this process's --import flags (the file timer; tsx when run-tests.mjs does not compile).
import { run } from "node:test";
import { spec } from "node:test/reporters";

// run-tests.mjs decides (cores + 1); 2 when this file is run by itself.
const concurrency = Number(process.env.QUIRE_TEST_CONCURRENCY ?? "2");
const stream = run({
  files: process.argv.slice(2),
  concurrency,
  // A test that hangs fails after this long, naming itself, instead of stalling the whole run. As
  // long as the longest budget a file gives itself (pipeline-e2e: 600 s), so that on a busy machine
  // this guard does not cut short a file its own limits still allow.
  timeout: 600_000,
});
// A failed, cancelled or timed-out test, or a file that fails to load, makes the run fail.
stream.on("test:fail", () => {
  process.exitCode = 1;
});
stream.compose(spec).pipe(process.stdout);
