// Loaded (--import) into every test file's process by run-tests.mjs when QUIRE_TEST_TIMES names a
// file: appends "<milliseconds since the process started>\t<test file>" to it when the process
// ends, so a run reports each file's own wall time (the spec reporter only times tests).
import { appendFileSync } from "node:fs";
import { relative } from "node:path";

const out = process.env.QUIRE_TEST_TIMES;
const file = process.argv[1];
if (out && file?.endsWith(".test.ts")) {
  process.once("exit", () => {
    appendFileSync(out, `${Math.round(performance.now())}\t${relative(process.cwd(), file)}\n`);
  });
}
