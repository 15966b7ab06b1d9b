import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { configureStallWindow } from "../../src/convert/cpu-watch.ts";
import { runSandboxed } from "../../src/convert/sandboxed-run.ts";
import { NO_SANDBOX, sandboxView } from "../../src/convert/sandbox.ts";

// Unconfined (prlimit only): what is tested is the runner's timing, not the sandbox.
const command = (script: string) => sandboxView({ addressSpaceBytes: 1024 ** 3 }, NO_SANDBOX).command("/bin/sh", ["-c", script]);

/** About 0.25 s of one core's time in dash, whatever the clock says. */
const BURN = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";

// A short window, so that the stalls below are seen within a second (QUIRE_CONVERTER_STALL_SECONDS).
configureStallWindow(1000);

describe("runSandboxed, progress on stderr", () => {
  test("restarting the timeout lets steady progress run past timeoutMs; a stall is still killed", async () => {
    const seen: string[] = [];
    // Four reports 0.6 s apart: 2.4 s in all, past the 2 s limit, each step well within it.
    const steady = await runSandboxed(command("for i in 1 2 3 4; do echo $i >&2; sleep 0.6; done"), {
      timeoutMs: 2000,
      onStderr: (chunk, restartTimeout) => {
        seen.push(chunk);
        restartTimeout();
      },
    });
    assert.equal(steady.kind, "exited");
    assert.equal(seen.join("").replace(/\s+/g, ""), "1234");
    // It sleeps: no processor time, so it is held back, not slow (issue 23 item 0e).
    const stalled = await runSandboxed(command("echo 1 >&2; sleep 30"), { timeoutMs: 300, onStderr: (_chunk, restartTimeout) => restartTimeout() });
    assert.equal(stalled.kind, "stalled");
  });

  test("without restarts the limit is on the whole run: a program that keeps the processor busy past it is too slow", async () => {
    const run = await runSandboxed(command("for i in 1 2 3 4 5 6; do echo $i >&2; done; while :; do :; done"), { timeoutMs: 400, onStderr: () => undefined });
    assert.equal(run.kind, "timeout");
  });
});

/** Issue 23 item 0e, issue 27 item 5: a limit on the converter's own processor time. */
describe("runSandboxed, judged by processor time", () => {
  test("a program stopped by SIGSTOP is killed as stalled within the stall window, not after its limit", async () => {
    // It stops itself; a limit of 10 minutes would hold a worker that long on the clock alone.
    const run = await runSandboxed(command("kill -STOP $$; echo never"), { timeoutMs: 600_000 });
    assert.equal(run.kind, "stalled");
    assert.ok(run.kind === "stalled" && run.why === "stalled");
    assert.ok(run.kind === "stalled" && run.usage.wallMs < 600_000);
  });

  test("a program starved by processor-burning processes on its core is never judged too slow when its own time is within the limit", async () => {
    // The program and three burners share core 0, each in a session of its own (the scheduler shares
    // a core between sessions first): the program gets about a quarter of it, so its 0.75 s of work
    // takes about 3 s on the clock, past a 2 s wall-clock limit but well within 2 s of its own time.
    // A machine busier still may hold it back past the wall allowance: then it is starved (retried),
    // still never too slow, since it used under half its limit (or, given no time at all for a whole
    // stall window, stalled: retried as well).
    const burners: ChildProcess[] = [0, 1, 2].map(() => spawn("taskset", ["-c", "0", "sh", "-c", "while :; do :; done"], { stdio: "ignore", detached: true }));
    try {
      const run = await runSandboxed(command(`taskset -c 0 sh -c '${BURN}; ${BURN}; ${BURN}; echo done'`), { timeoutMs: 2000 });
      assert.ok(run.kind === "exited" || run.kind === "stalled", JSON.stringify(run));
      if (run.kind === "exited") assert.equal(run.stdout.trim(), "done");
    } finally {
      for (const b of burners) b.kill("SIGKILL");
    }
  });
});
