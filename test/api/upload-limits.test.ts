import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import Database from "better-sqlite3";
import { PROJECT_ROOT, QUIRE_BIN } from "../helpers/paths.ts";
import { rawHttp } from "../helpers/api-client.ts";
import { listFiles } from "../helpers/test-server.ts";
import { closing, failure, fields, newBlobFiles, newBoundary, parseRsp, partHead, signedUpload, type Rsp } from "../helpers/multipart.ts";

/**
 * The upload size limit (interface §4.2, §7 205, §8; decisions §2 step 7) against `quire serve`
 * in a child process, so the server's own memory can be watched while 100 MiB stream through it.
 */

const LIMIT = 100 * 1024 * 1024;
const MAX_RSS_GROWTH_KB = 64 * 1024; // 64 MiB
/** A hang guard for the 100 MiB uploads, not a timing assertion. */
const BIG_UPLOAD_GUARD_MS = 60_000;

interface Child {
  proc: ChildProcessWithoutNullStreams;
  url: string;
  account: { apiKey: string; apiSecret: string };
}

let tmp: string;
let child: Child;

/** `quire serve` on a free port over a fresh data folder; resolves once it listens. */
function startChild(dataDir: string): Promise<Child> {
  // --no-worker: only the HTTP server is under test here (no conversion process beside it).
  const proc = spawn(process.execPath, [QUIRE_BIN, "serve", "--no-worker"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, QUIRE_DATA_DIR: dataDir, QUIRE_PORT: "0", QUIRE_LOG_LEVEL: "silent" },
  });
  let out = "";
  let err = "";
  proc.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`quire serve exited with ${code}: ${out}\n${err}`));
    proc.once("exit", onExit);
    proc.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const listening = /Quire listening on (http:\/\/\S+)/.exec(out);
      const apiKey = /apiKey:\s+(\S+)/.exec(out)?.[1];
      const apiSecret = /apiSecret:\s+(\S+)/.exec(out)?.[1];
      if (listening && apiKey && apiSecret) {
        proc.off("exit", onExit);
        resolve({ proc, url: listening[1]!, account: { apiKey, apiSecret } });
      }
    });
  });
}

function stopChild(c: Child): Promise<void> {
  return new Promise((resolve) => {
    if (c.proc.exitCode !== null || c.proc.signalCode !== null) return resolve();
    const force = setTimeout(() => c.proc.kill("SIGKILL"), 10_000);
    c.proc.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    c.proc.kill("SIGTERM");
  });
}

/** A field of /proc/<pid>/status in kB (VmRSS: resident now; VmHWM: peak resident). */
function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no ${field}`);
  return Number(m[1]);
}

/**
 * Watches the child's RSS: sampled every 50 ms, and also its kernel-kept peak (VmHWM, reset to
 * the current RSS at the start through /proc/<pid>/clear_refs) so no short spike between two
 * samples is missed. Answers the RSS at the start and the peak.
 */
function watchRss(pid: number): { stop(): { baseKb: number; peakKb: number } } {
  let hwmReset = false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    hwmReset = true;
  } catch {
    // not allowed here: the samples alone tell the peak
  }
  const baseKb = statusKb(pid, "VmRSS");
  let peakKb = baseKb;
  const sample = () => {
    try {
      peakKb = Math.max(peakKb, statusKb(pid, "VmRSS"));
    } catch {
      // the child is gone; the test will say so
    }
  };
  const timer = setInterval(sample, 50);
  timer.unref();
  let result: { baseKb: number; peakKb: number } | undefined;
  return {
    /** Stops watching (once; later calls answer the same). */
    stop() {
      if (result) return result;
      clearInterval(timer);
      sample();
      try {
        if (hwmReset) peakKb = Math.max(peakKb, statusKb(pid, "VmHWM"));
      } catch {
        // the child is gone; the test will say so
      }
      return (result = { baseKb, peakKb });
    },
  };
}

function countRows(): { documents: number; jobs: number } {
  const db = new Database(join(tmp, "quire.db"), { readonly: true, fileMustExist: true });
  try {
    const n = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return { documents: n("documents"), jobs: n("jobs") };
  } finally {
    db.close();
  }
}

const blobDir = () => join(tmp, "blobs");
const listBlobFiles = () => listFiles(blobDir());

interface StreamResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Bytes of the file part sent before the answer came (or before the abort). */
  fileBytesSent: number;
}

/**
 * Streams a signed upload whose file is `fileSize` bytes: `%PDF-1.4` and then zeros, generated
 * on the fly from one reused buffer (never held whole). Stops writing as soon as an answer
 * arrives. With `abortAfter`, destroys the connection once that many file bytes are sent.
 */
async function streamUpload(fileSize: number, opts: { abortAfter?: number } = {}): Promise<StreamResult> {
  const boundary = newBoundary();
  const params = signedUpload(child.account);
  const head = Buffer.concat([
    ...fields(params).map((p) => Buffer.concat([partHead(boundary, p), Buffer.from(p.value as string), Buffer.from("\r\n")])),
    partHead(boundary, { name: "file", filename: "big.pdf" }),
  ]);
  const tail = closing(boundary);
  const CHUNK = 1024 * 1024;
  const zeros = Buffer.alloc(CHUNK);
  const pdfHead = Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "latin1");

  let sent = 0;
  const hangUp = new AbortController();
  async function* body() {
    yield head;
    while (sent < fileSize) {
      if (opts.abortAfter !== undefined && sent >= opts.abortAfter) {
        hangUp.abort();
        return;
      }
      let chunk: Buffer = sent === 0 ? Buffer.concat([pdfHead, zeros.subarray(pdfHead.length)]) : zeros;
      if (chunk.length > fileSize - sent) chunk = chunk.subarray(0, fileSize - sent);
      sent += chunk.length;
      yield chunk;
    }
    yield tail;
  }
  try {
    const res = await rawHttp(child.url, {
      method: "POST",
      path: "/upload/1_0",
      headers: [["Content-Type", `multipart/form-data; boundary=${boundary}`], ["Content-Length", String(head.length + fileSize + tail.length)]],
      body: body(),
      timeoutMs: BIG_UPLOAD_GUARD_MS,
      signal: hangUp.signal,
    });
    return { status: res.status, headers: res.headers, text: res.body, fileBytesSent: sent };
  } catch (err) {
    if (hangUp.signal.aborted) return { status: 0, headers: {}, text: "", fileBytesSent: sent };
    throw err;
  }
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "quire-limits-"));
  child = await startChild(tmp);
});
after(async () => {
  if (child) await stopChild(child);
  await rm(tmp, { recursive: true, force: true });
});

describe("upload size limit (100 MiB) on quire serve", () => {
  test("a small upload works (and warms the server up)", async () => {
    const res = await streamUpload(64 * 1024);
    assert.equal(res.status, 200);
    const rsp = parseRsp({ status: res.status, headers: res.headers, text: res.text });
    assert.equal(rsp.stat, "ok", res.text);
    assert.equal(rsp.document!.orgDocType, "pdf");
    assert.deepEqual(countRows(), { documents: 1, jobs: 1 });
  });

  test("100 MiB + 1 byte: 205 on file, memory stays flat, nothing stored", async (t) => {
    const filesBefore = await listBlobFiles();
    const rowsBefore = countRows();
    const rss = watchRss(child.proc.pid!);
    const res = await streamUpload(LIMIT + 1).finally(() => rss.stop());
    const { baseKb, peakKb } = rss.stop();
    t.diagnostic(`RSS of the server: ${baseKb} kB before, ${peakKb} kB at the peak, growth ${peakKb - baseKb} kB; ${res.fileBytesSent} file bytes sent before the answer`);

    assert.equal(res.status, 200);
    const rsp: Rsp = parseRsp({ status: res.status, headers: res.headers, text: res.text });
    assert.equal(failure(rsp), "205/file");
    assert.equal(rsp.error!.message, "File size is too large");
    assert.ok(peakKb - baseKb < MAX_RSS_GROWTH_KB, `server RSS grew by ${peakKb - baseKb} kB (limit ${MAX_RSS_GROWTH_KB} kB)`);

    assert.deepEqual(await newBlobFiles(listBlobFiles, filesBefore), [], "no blob file and no spool file (.tmp/) left");
    assert.deepEqual(countRows(), rowsBefore, "no document and no job");
  });

  test("an upload aborted by the client mid-file leaves no blob file and no record", async () => {
    const filesBefore = await listBlobFiles();
    const rowsBefore = countRows();
    const res = await streamUpload(20 * 1024 * 1024, { abortAfter: 5 * 1024 * 1024 });
    assert.equal(res.status, 0, "the client went away before any answer");
    // The server notices the abort asynchronously: give its clean-up up to 5 s.
    assert.deepEqual(await newBlobFiles(listBlobFiles, filesBefore, 5000), [], "the spool file of the aborted upload is removed");
    assert.deepEqual(countRows(), rowsBefore, "no document and no job");
    // And the server is still fine.
    const ok = await streamUpload(1024);
    assert.equal(parseRsp({ status: ok.status, headers: ok.headers, text: ok.text }).stat, "ok", ok.text);
  });

  test("exactly 100 MiB (the limit) is accepted, streamed to one blob of that size", async (t) => {
    const filesBefore = await listBlobFiles();
    const rowsBefore = countRows();
    const rss = watchRss(child.proc.pid!);
    const res = await streamUpload(LIMIT).finally(() => rss.stop());
    const { baseKb, peakKb } = rss.stop();
    t.diagnostic(`RSS of the server: ${baseKb} kB before, ${peakKb} kB at the peak, growth ${peakKb - baseKb} kB`);

    const rsp = parseRsp({ status: res.status, headers: res.headers, text: res.text });
    assert.equal(rsp.stat, "ok", res.text);
    assert.equal(rsp.document!.orgDocType, "pdf");
    assert.equal(rsp.document!.state, "P");
    assert.ok(peakKb - baseKb < MAX_RSS_GROWTH_KB, `server RSS grew by ${peakKb - baseKb} kB (limit ${MAX_RSS_GROWTH_KB} kB)`);

    const added = (await listBlobFiles()).filter((f) => !filesBefore.includes(f));
    assert.equal(added.length, 1, JSON.stringify(added));
    assert.match(added[0]!, /^documents\//);
    assert.equal((await stat(join(blobDir(), added[0]!))).size, LIMIT);
    assert.deepEqual(countRows(), { documents: rowsBefore.documents + 1, jobs: rowsBefore.jobs + 1 });
  });
});
