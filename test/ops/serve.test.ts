import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { openStore } from "../../src/store/open-store.ts";
import { rawHttp } from "../helpers/api-client.ts";
import { closing, fields, fileField, multipartBody, newBoundary, partHead, signedUpload } from "../helpers/multipart.ts";
import { sample } from "../helpers/metrics-text.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { spawnQuire, type QuireProcess } from "../helpers/quire-process.ts";
import { startS3Server, type TestS3Server } from "../helpers/s3-server.ts";

/**
 * `quire serve --no-worker` as an operator runs it, over SQLite and S3 (s3rver): liveness,
 * readiness of store and blobs, Prometheus metrics, request ids, and a graceful SIGTERM that lets
 * an upload in flight finish.
 */

const PDF = join(FIXTURES, "pdf-quartz-firefox-1page.pdf");
let dir: string;
let s3: TestS3Server;
let api: QuireProcess;
let url: string;
let account: { apiKey: string; apiSecret: string };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "quire-ops-"));
  s3 = await startS3Server("quire-ops");
  const store = await openStore(join(dir, "quire.db"));
  account = await createAccount(store, "operator");
  await store.close();
  api = spawnQuire(["serve", "--no-worker"], {
    ...s3.env,
    QUIRE_DATA_DIR: dir,
    QUIRE_PORT: "0",
    QUIRE_BLOB_URL: `s3://${s3.bucket}`,
    QUIRE_LOG_LEVEL: "info",
    QUIRE_DEMO_ACCOUNT: "0",
  });
  url = (await api.waitFor(/Quire listening on (http:\/\/\S+?) /))[1]!;
});

after(async () => {
  await api?.kill("SIGKILL");
  await s3?.close().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

test("/healthz answers; /readyz checks store, blobs and the data disk's free space, and no converter without a worker", async () => {
  const live = await fetch(`${url}/healthz`);
  assert.equal(live.status, 200);
  const ready = await fetch(`${url}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: "ok", checks: { store: "ok", blobs: "ok", disk: "ok" } });
});

test("metrics count requests by action and code, upload bytes and the queue; request ids are echoed and logged", async () => {
  const client = new QuireClient({ baseUrl: url, apiKey: account.apiKey, apiSecret: account.apiSecret });
  unwrap(await client.upload(PDF));
  const bad = new QuireClient({ baseUrl: url, apiKey: account.apiKey, apiSecret: "0".repeat(32) });
  assert.equal((await bad.call("document.list")).rsp.stat, "fail");
  const traced = await fetch(`${url}/1_0?action=svc.document.list`, { headers: { "x-request-id": "trace-42" } });
  assert.equal(traced.headers.get("x-request-id"), "trace-42");
  assert.match((await fetch(`${url}/healthz`)).headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);

  const metrics = await (await fetch(`${url}/metrics`)).text();
  const size = (await readFile(PDF)).length;
  assert.equal(sample(metrics, "quire_api_requests_total", { action: "document.upload", code: "ok", role: "api" }), 1);
  const refused = metrics.split("\n").filter((l) => l.startsWith("quire_api_requests_total{") && l.includes('action="none"'));
  assert.equal(refused.reduce((n, l) => n + Number(l.split(" ")[1]), 0), 2, "refused before authentication: action none, with their codes");
  assert.ok(refused.every((l) => /code="\d{3}"/.test(l)));
  assert.equal(sample(metrics, "quire_upload_bytes_total"), size);
  assert.equal(sample(metrics, "quire_jobs", { state: "queued" }), 1);
  assert.equal(sample(metrics, "quire_queue_depth"), 1);
  assert.ok((sample(metrics, "quire_queue_oldest_age_seconds") ?? -1) >= 0);
  // Access lines are written in batches, at the latest about a second later.
  for (let i = 0; i < 100 && !api.logLines().some((l) => l.reqId === "trace-42"); i++) await new Promise((r) => setTimeout(r, 50));
  const traceLines = api.logLines().filter((l) => l.reqId === "trace-42");
  assert.equal(traceLines.length, 1, "one access line per request, carrying the request id");
  assert.deepEqual(
    { msg: traceLines[0]!.msg, method: traceLines[0]!.method, path: traceLines[0]!.path, status: traceLines[0]!.status, action: traceLines[0]!.action, code: traceLines[0]!.code },
    { msg: "answered", method: "GET", path: "/1_0", status: 200, action: "none", code: "009" },
  );
  assert.equal(typeof traceLines[0]!.ms, "number");
  // An address that is no route: Fastify's own not-found line would name the whole URL.
  assert.equal((await fetch(`${url}/api/9_9?apiKey=${account.apiKey}&signature=${"0".repeat(32)}`, { headers: { "x-request-id": "lost-1" } })).status, 404);
  for (let i = 0; i < 100 && !api.logLines().some((l) => l.reqId === "lost-1"); i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(
    api.logLines().filter((l) => l.reqId === "lost-1").map((l) => [l.msg, l.path, l.status]),
    [["answered", "/api/9_9", 404]],
  );
  assert.ok(!api.logLines().some((l) => /signature=|apiKey=/.test(JSON.stringify(l))), "query strings (key, signature) are never logged");
});

test("the request id of an upload is recorded on its job, for the worker's log lines", async () => {
  const boundary = newBoundary();
  const body = multipartBody(boundary, [...fields(signedUpload(account, { format: "json" })), fileField(await readFile(PDF), "traced.pdf")]);
  const res = await fetch(`${url}/upload/1_0`, {
    method: "POST",
    headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "x-request-id": "upload-7" },
    body: new Uint8Array(body),
  });
  const documentId = ((await res.json()) as { rsp: { _content: { document: { documentId: string } } } }).rsp._content.document.documentId;
  const store = await openStore(join(dir, "quire.db"));
  try {
    const [job] = await store.jobs.getForDocument(documentId);
    assert.equal(job?.requestId, "upload-7");
  } finally {
    await store.close();
  }
});

test("SIGTERM: an upload in flight finishes and is answered, then the process exits 0", async () => {
  const boundary = newBoundary();
  const data = await readFile(PDF);
  const params = fields(signedUpload(account, { format: "json" }));
  const head = Buffer.concat([
    ...params.flatMap((p) => [partHead(boundary, p), Buffer.from(`${String(p.value)}\r\n`)]),
    partHead(boundary, { name: "file", filename: "late.pdf" }),
  ]);
  const rest = Buffer.concat([data.subarray(1000), closing(boundary)]);
  // The rest of the body only once the server is stopping.
  async function* body() {
    yield head;
    yield data.subarray(0, 1000);
    await sleep(300);
    void api.child.kill("SIGTERM");
    await sleep(500);
    yield rest;
  }
  const target = new URL(url);
  const answer = rawHttp(target.origin, {
    method: "POST",
    path: "/upload/1_0",
    headers: [["Content-Type", `multipart/form-data; boundary=${boundary}`], ["Content-Length", String(head.length + 1000 + rest.length)]],
    body: body(),
  });
  const { status, body: text } = await answer;
  assert.equal(status, 200);
  assert.equal(JSON.parse(text).rsp.stat, "ok", text);
  assert.equal(await api.exited, 0);
});

test("/readyz is 503 naming the blob store once S3 is gone", async () => {
  // a fresh API process, then the S3 server stops
  const again = spawnQuire(["serve", "--no-worker"], { ...s3.env, QUIRE_DATA_DIR: dir, QUIRE_PORT: "0", QUIRE_BLOB_URL: `s3://${s3.bucket}`, QUIRE_LOG_LEVEL: "silent", QUIRE_DEMO_ACCOUNT: "0" });
  try {
    const u = (await again.waitFor(/Quire listening on (http:\/\/\S+?) /))[1]!;
    await s3.close();
    const ready = await fetch(`${u}/readyz`);
    assert.equal(ready.status, 503);
    const body = (await ready.json()) as { status: string; checks: Record<string, string> };
    assert.equal(body.checks.store, "ok");
    assert.notEqual(body.checks.blobs, "ok");
    assert.equal((await fetch(`${u}/healthz`)).status, 200, "liveness does not depend on S3");
  } finally {
    await again.kill("SIGKILL");
  }
});
