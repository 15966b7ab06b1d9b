import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { until } from "../helpers/poll.ts";
import { startWorker } from "../helpers/worker-process.ts";

describe("the converters' sandbox fails closed", { timeout: 180_000 }, () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "quire-worker-sandbox-"));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  test("a worker whose sandbox cannot be built refuses to start, saying why and what to do", async () => {
    const w = startWorker({ QUIRE_DATA_DIR: dataDir, QUIRE_BWRAP: "/bin/false", QUIRE_OFFICE_SLOTS: "1" });
    assert.equal(await w.exited, 1, w.out());
    assert.match(w.out(), /the converters' sandbox cannot be built: `\/bin\/false` failed/);
    assert.match(w.out(), /QUIRE_UNSAFE_NO_SANDBOX=1/);
    assert.doesNotMatch(w.out(), /worker started/);
  });

  test("with QUIRE_UNSAFE_NO_SANDBOX=1 the same worker starts, and warns", async () => {
    const w = startWorker({ QUIRE_DATA_DIR: dataDir, QUIRE_BWRAP: "/bin/false", QUIRE_UNSAFE_NO_SANDBOX: "1", QUIRE_OFFICE_SLOTS: "1" });
    try {
      await until(() => w.out().includes("worker started") || w.child.exitCode !== null, 120_000, "the worker to start");
      assert.match(w.out(), /worker started/, w.out());
      assert.match(w.out(), /converters run without a sandbox/);
    } finally {
      w.child.kill("SIGTERM");
      await w.exited;
    }
  });
});
