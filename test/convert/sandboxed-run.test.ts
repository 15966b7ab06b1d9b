import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { configureStallWindow } from "../../src/convert/cpu-watch.ts";
import { runSandboxed } from "../../src/convert/sandboxed-run.ts";
import { NO_SANDBOX, sandboxView } from "../../src/convert/sandbox.ts";

// Unconfined (prlimit only): what is tested is the runner's timing, not the sandbox.
const command = (script: string) => sandboxView({ addressSpaceBytes: 1024 ** 3 }, NO_SANDBOX).command("/bin/sh", ["-c", script]);

/** A fixed amount of work for one core in dash: 0.25 s of its time on one machine, 0.65 s on another. */
const BURN = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";

/** The processor time BURN takes on this machine, in ms: the shell's own, read from /proc at its end. */
function burnCpuMs(): number {
  const out = spawnSync("sh", ["-c", `${BURN}; cat /proc/$$/stat`], { encoding: "utf8" }).stdout;
  // utime and stime, fields 14 and 15 of stat(5) (11 and 12 after the name and state), in ticks of 10 ms.
  const fields = out.slice(out.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

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

  test("a watcher held back past the stall window (its event loop busy) does not take a converter that reported progress meanwhile for stalled", async () => {
    let blocked = false;
    const run = await runSandboxed(command("for i in 1 2 3 4; do echo $i >&2; sleep 0.3; done"), {
      timeoutMs: 2000,
      onStderr: (_chunk, restartTimeout) => {
        restartTimeout();
        if (blocked) return;
        blocked = true;
        // The event loop held for longer than the 1 s window, as a loaded machine or a long
        // synchronous step holds it: the reports made meanwhile wait in the pipe behind the sampler.
        const until = performance.now() + 1500;
        while (performance.now() < until);
      },
    });
    assert.equal(run.kind, "exited");
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
    // a core between sessions first): the program gets about a quarter of it, so its work (three
    // BURNs, 0.75 s of its own time on a machine where a BURN takes 0.25 s) takes about four times
    // that on the clock, past the limit (2 s there) but well within the limit of its own time. The
    // limit is set from what a BURN costs on this machine (its work 40% of the limit, under the half
    // that would make it too slow): with a fixed 2 s, a machine where a BURN takes 0.65 s ran out of
    // it on work alone. A machine busier still may hold it back past the wall allowance: then it is
    // starved (retried), still never too slow, since it used under half its limit (or, given no time
    // at all for a whole stall window, stalled: retried as well).
    const timeoutMs = Math.max(2000, Math.ceil(burnCpuMs() * 3 * 2.5));
    const burners: ChildProcess[] = [0, 1, 2].map(() => spawn("taskset", ["-c", "0", "sh", "-c", "while :; do :; done"], { stdio: "ignore", detached: true }));
    try {
      const run = await runSandboxed(command(`taskset -c 0 sh -c '${BURN}; ${BURN}; ${BURN}; echo done'`), { timeoutMs });
      assert.ok(run.kind === "exited" || run.kind === "stalled", JSON.stringify(run));
      if (run.kind === "exited") assert.equal(run.stdout.trim(), "done");
    } finally {
      for (const b of burners) b.kill("SIGKILL");
    }
  });
});
