import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { spawn as spawnAsync } from "node:child_process";
import { FIXTURES, PROJECT_ROOT, QUIRE_BIN } from "../helpers/paths.ts";
import { startTestServer } from "../helpers/test-server.ts";
import { signParams } from "../helpers/independent-sign.ts";
import { until } from "../helpers/poll.ts";

function quire(dataDir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [QUIRE_BIN, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, QUIRE_DATA_DIR: dataDir, QUIRE_LOG_LEVEL: "silent" },
    encoding: "utf8",
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const field = (out: string, name: string) => new RegExp(`${name}:\\s+(\\S+)`).exec(out)?.[1];

describe("quire accounts", () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), "quire-cli-"))));
  after(() => rm(dir, { recursive: true, force: true }));

  test("create prints a 32-character key and secret; list shows it; revoke-key removes it", () => {
    const created = quire(dir, "accounts", "create", "alice");
    assert.equal(created.code, 0, created.err);
    const key = field(created.out, "apiKey");
    const secret = field(created.out, "apiSecret");
    assert.match(key ?? "", /^[a-z0-9]{32}$/);
    assert.match(secret ?? "", /^[a-z0-9]{32}$/);

    const second = quire(dir, "accounts", "add-key", "alice");
    const key2 = field(second.out, "apiKey");
    assert.notEqual(key2, key);

    const listed = quire(dir, "accounts", "list");
    assert.match(listed.out, new RegExp(`^alice\\t.*${key},${key2}$`, "m"));
    assert.doesNotMatch(listed.out, new RegExp(secret!), "secrets are never listed");

    assert.equal(quire(dir, "accounts", "revoke-key", key!).code, 0);
    assert.equal(quire(dir, "accounts", "revoke-key", key!).code, 1, "an already revoked key is reported");
    const after = quire(dir, "accounts", "list");
    assert.doesNotMatch(after.out, new RegExp(key!));
    assert.match(after.out, new RegExp(key2!));
  });

  test("bad and taken usernames are refused", () => {
    assert.equal(quire(dir, "accounts", "create", "Bad Name").code, 1);
    assert.equal(quire(dir, "accounts", "create", "ab").code, 1);
    quire(dir, "accounts", "create", "bobby");
    const again = quire(dir, "accounts", "create", "bobby");
    assert.equal(again.code, 1);
    assert.match(again.err, /taken/);
  });

  test("usage errors exit 2", () => {
    assert.equal(quire(dir, "accounts").code, 2);
    assert.equal(quire(dir, "nonsense").code, 2);
  });

  test("pages reencode [--force] queues the page-variants jobs; an unknown document exits 1, wrong arguments 2", () => {
    const r = quire(dir, "pages", "reencode");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^\d+ documents? queued for page re-encoding\n$/);
    const forced = quire(dir, "pages", "reencode", "--force");
    assert.equal(forced.code, 0, forced.err);
    assert.match(forced.out, /^\d+ documents? queued for page re-encoding \(--force: stored variants made again\)\n$/);
    assert.equal(quire(dir, "pages", "reencode", "--document", "no-such-document", "--force").code, 1);
    assert.equal(quire(dir, "pages", "reencode", "--everything").code, 2);
    assert.equal(quire(dir, "pages", "shrink").code, 2);
    assert.equal(quire(dir, "pages").code, 0, "usage");
  });
});

/** Starts `quire serve` on a free port; resolves with its stdout once it listens. */
function serve(dataDir: string): Promise<{ out: string; url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [QUIRE_BIN, "serve"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, QUIRE_DATA_DIR: dataDir, QUIRE_PORT: "0", QUIRE_LOG_LEVEL: "silent" },
  });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /Quire listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        resolve({
          out,
          url: m[1]!,
          pid: child.pid!,
          stop: () => new Promise((done) => {
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}

/** Live processes whose command line names `dir` (serve's worker and its LibreOffice run under it). */
function processesUnder(dir: string): string[] {
  return spawnSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" })
    .stdout.split("\n")
    .filter((l) => l.includes(dir) && !/^\s*\d+\s+Z/.test(l));
}

const childrenOf = (pid: number) =>
  spawnSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" }).stdout.split("\n").map(Number).filter(Boolean);

describe("quire serve", () => {
  test("SIGTERM the moment it listens stops it and its worker; nothing is left running", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quire-serve-stop-"));
    try {
      const s = await serve(dir); // its worker is spawned right after this line is printed
      await s.stop();
      await until(() => processesUnder(dir).length === 0, 60_000, `left running: ${processesUnder(dir).join("; ")}`, 250);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a worker whose serve process is SIGKILLed stops by itself, with its LibreOffice", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quire-serve-kill-"));
    try {
      const s = await serve(dir);
      await until(() => childrenOf(s.pid).length > 0, 60_000, "serve started no worker", 250);
      const [workerPid] = childrenOf(s.pid);
      // Once LibreOffice runs under it, the worker has something to clean up.
      await until(() => processesUnder(dir).some((l) => l.includes("soffice")), 60_000, "the worker started no LibreOffice", 250);
      process.kill(s.pid, "SIGKILL");
      await until(() => processesUnder(dir).length === 0, 60_000, `worker ${workerPid} left running: ${processesUnder(dir).join("; ")}`, 250);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("an empty store gets a demo account, printed once, whose key works", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quire-serve-"));
    try {
      const first = await serve(dir);
      const key = field(first.out, "apiKey")!;
      const secret = field(first.out, "apiSecret")!;
      assert.match(first.out, /username:\s+demo/);
      const params = signParams(secret, { apiKey: key, action: "svc.document.url_upload", slurpUrl: "https://example.com/a.pdf", format: "json" });
      const res = await fetch(`${first.url}/1_0?${new URLSearchParams(params)}`);
      const body = (await res.json()) as { rsp: { stat: string; _content: { document: { username: string } } } };
      assert.equal(body.rsp.stat, "ok");
      assert.equal(body.rsp._content.document.username, "demo");
      await first.stop();

      const second = await serve(dir);
      assert.doesNotMatch(second.out, /apiKey/, "the demo credentials are shown only once");
      await second.stop();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Runs `quire upload` against a server without blocking this process's event loop (the server lives here). */
function upload(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawnAsync(process.execPath, [QUIRE_BIN, "upload", ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("exit", (code) => resolve({ code, out, err }));
  });
}

describe("quire upload", () => {
  test("uploads a file or an address and prints the record; a refusal exits 1 with its code", async () => {
    const server = await startTestServer();
    try {
      const env = { QUIRE_URL: server.url, QUIRE_API_KEY: server.account.apiKey, QUIRE_API_SECRET: server.account.apiSecret };
      const file = await upload(env, join(FIXTURES, "pdf-tcpdf-14pages.pdf"), "--title", "Standard fonts", "--tags", "a,b");
      assert.equal(file.code, 0, file.err);
      const doc = JSON.parse(file.out).document;
      assert.equal(doc.title, "Standard fonts");
      assert.equal(doc.orgDocType, "pdf");
      assert.deepEqual(doc.tags, ["a", "b"]);

      const url = await upload(env, "https://example.com/files/report.odt");
      assert.equal(url.code, 0, url.err);
      assert.equal(JSON.parse(url.out).document.origin, "apislurp");

      const bad = await upload(env, join(FIXTURES, "bad", "hello.zip"));
      assert.equal(bad.code, 1);
      assert.match(bad.err, /201 .*\(file\)/);
      assert.deepEqual(await server.countRecords(), { documents: 2, jobs: 2 });

      assert.equal((await upload({})).code, 2, "no target and no credentials: usage");
    } finally {
      await server.close();
    }
  });
});
