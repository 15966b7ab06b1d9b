import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runSandboxed } from "../../src/convert/sandboxed-run.ts";
import { NO_SANDBOX, sandboxView } from "../../src/convert/sandbox.ts";

// Unconfined (prlimit only): what is tested is the runner's timing, not the sandbox.
const command = (script: string) => sandboxView({ addressSpaceBytes: 1024 ** 3 }, NO_SANDBOX).command("/bin/sh", ["-c", script]);

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
    const stalled = await runSandboxed(command("echo 1 >&2; sleep 30"), { timeoutMs: 300, onStderr: (_chunk, restartTimeout) => restartTimeout() });
    assert.equal(stalled.kind, "timeout");
  });

  test("without restarts the limit is on the whole run", async () => {
    const run = await runSandboxed(command("for i in 1 2 3 4 5 6; do echo $i >&2; sleep 0.1; done; sleep 30"), { timeoutMs: 400, onStderr: () => undefined });
    assert.equal(run.kind, "timeout");
  });
});
