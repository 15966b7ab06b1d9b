import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { spawnQuire, type QuireProcess } from "../helpers/quire-process.ts";

/**
 * The access log gathers lines before writing them (docs/operations.md): a normal stop must still
 * write every line, and a SIGKILL may lose only the lines of about the last second.
 */

const REQUESTS = 60;

async function serve(dir: string): Promise<{ api: QuireProcess; url: string }> {
  const api = spawnQuire(["serve", "--no-worker"], { QUIRE_DATA_DIR: dir, QUIRE_PORT: "0", QUIRE_LOG_LEVEL: "info", QUIRE_DEMO_ACCOUNT: "0" });
  const url = (await api.waitFor(/Quire listening on (http:\/\/\S+?) /))[1]!;
  return { api, url };
}

async function requests(url: string, prefix: string): Promise<void> {
  for (let i = 0; i < REQUESTS; i++) {
    const res = await fetch(`${url}/healthz`, { headers: { "x-request-id": `${prefix}-${i}` } });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  }
}

/** The process is gone and its stdout read to the end: what it wrote is all in `api.out`. */
async function ended(api: QuireProcess): Promise<number | string> {
  const code = await api.exited;
  if (!api.child.stdout!.readableEnded) await once(api.child.stdout!, "end");
  return code;
}

const linesOf = (api: QuireProcess, prefix: string) => api.logLines().filter((l) => typeof l.reqId === "string" && l.reqId.startsWith(`${prefix}-`));

test("SIGTERM: every request answered before the stop has its access line, once", async () => {
  const dir = await mkdtemp(join(tmpdir(), "quire-access-log-"));
  const { api, url } = await serve(dir);
  try {
    await requests(url, "stop");
    api.child.kill("SIGTERM");
    assert.equal(await ended(api), 0);
    const lines = linesOf(api, "stop");
    assert.deepEqual(lines.map((l) => l.reqId).sort(), Array.from({ length: REQUESTS }, (_, i) => `stop-${i}`).sort());
    assert.ok(lines.every((l) => l.msg === "answered" && l.path === "/healthz" && l.status === 200));
  } finally {
    await api.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
});

test("SIGKILL: the lines of requests answered more than a second before are written; the last second's may be lost", async () => {
  const dir = await mkdtemp(join(tmpdir(), "quire-access-log-"));
  const { api, url } = await serve(dir);
  try {
    await requests(url, "early");
    // The bound (1 s) and a margin; then two requests in turn, so that the server's event loop has
    // turned since (its flush timer ran) even on a machine too busy to run it on time.
    await sleep(2500);
    for (let i = 0; i < 2; i++) await (await fetch(`${url}/healthz`, { headers: { "x-request-id": `ping-${i}` } })).arrayBuffer();
    api.child.kill("SIGKILL");
    assert.equal(await ended(api), "SIGKILL");
    assert.deepEqual(linesOf(api, "early").map((l) => l.reqId).sort(), Array.from({ length: REQUESTS }, (_, i) => `early-${i}`).sort());
  } finally {
    await api.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
});
