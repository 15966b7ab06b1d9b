import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, test } from "node:test";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { parse } from "yaml";
import { NODE_FLAGS } from "../../bin/node-flags.js";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { loadConfig } from "../../src/config.ts";
import { createDatabase, dropDatabase, PG_ADMIN_URL, postgresUnavailable } from "../helpers/dialects.ts";
import { sample } from "../helpers/metrics-text.ts";
import { FIXTURES, PROJECT_ROOT } from "../helpers/paths.ts";
import { until } from "../helpers/poll.ts";
import { startS3Server, type TestS3Server } from "../helpers/s3-server.ts";

/**
 * compose.yaml, read as Compose reads it (merge keys included), checked against the code, then run
 * for real on this machine's stand-ins: the local PostgreSQL for `postgres`, an s3rver for `minio`
 * (bucket made as `minio-init` makes it), and the `api` and `worker` services started with their
 * own command and environment, as the image's ENTRYPOINT (`node <flags> bin/quire.js`) starts them. No
 * Docker engine is involved: pulling images, HEALTHCHECK scheduling, volumes and cap_add are not
 * tested here (scripts/check-image.ts builds the image with buildah and runs it).
 */

interface Healthcheck {
  test: string[] | string;
}
interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: string[];
  healthcheck?: Healthcheck;
  stop_grace_period?: string;
  depends_on?: Record<string, { condition: string }> | string[];
}
interface Compose {
  services: Record<string, Service>;
}

const composeText = await readFile(join(PROJECT_ROOT, "compose.yaml"), "utf8");
const compose = parse(composeText, { merge: true }) as Compose;
const dockerfile = await readFile(join(PROJECT_ROOT, "Dockerfile"), "utf8");
const readme = await readFile(join(PROJECT_ROOT, "README.md"), "utf8");
const configSource = await readFile(join(PROJECT_ROOT, "src/config.ts"), "utf8");
const cliSource = await readFile(join(PROJECT_ROOT, "src/cli/main.ts"), "utf8");

function list(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : value.split(/\s+/).filter((w) => w !== "");
}

function environment(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? "" : String(v)]));
}

/** The image's ENV (every `ENV k=v …` of the last stage, continuations joined). */
function imageEnv(): Record<string, string> {
  const joined = dockerfile.replace(/\\\r?\n/g, " ");
  const lastStage = joined.slice(joined.lastIndexOf("\nFROM "));
  const env: Record<string, string> = {};
  for (const m of lastStage.matchAll(/^ENV\s+(.+)$/gm)) {
    for (const pair of m[1]!.trim().split(/\s+/)) {
      const eq = pair.indexOf("=");
      assert.ok(eq > 0, `ENV ${pair}: expected name=value`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1).replace(/^"(.*)"$/, "$1");
    }
  }
  return env;
}

/** Compose durations: `40s`, `1m30s`. */
function durationMs(text: string | undefined, fallback: number): number {
  if (!text) return fallback;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(n) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as "ms"];
  return ms;
}

/** The variables named in the README's configuration table. */
function documentedVariables(): Set<string> {
  const section = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1));
  const names = new Set<string>();
  for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
    const firstCell = line.split("|")[1]!;
    for (const m of firstCell.matchAll(/`([A-Z0-9_]+)`/g)) names.add(m[1]!);
  }
  return names;
}

/** What the code reads: src/config.ts for Quire's own, the AWS SDK's environment provider for credentials. */
async function readByCode(name: string): Promise<boolean> {
  if (new RegExp(`\\b${name}\\b`).test(configSource)) return true;
  const sdkEnvProvider = join(PROJECT_ROOT, "node_modules/@aws-sdk/credential-provider-env/dist-cjs/index.js");
  return name.startsWith("AWS_") && existsSync(sdkEnvProvider) && (await readFile(sdkEnvProvider, "utf8")).includes(`"${name}"`);
}

const built = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
const byName = (name: string) => {
  const s = compose.services[name];
  assert.ok(s, `compose.yaml has a ${name} service`);
  return s;
};

test("compose.yaml: the built services run commands the CLI knows", () => {
  assert.deepEqual(built.map(([n]) => n).sort(), ["api", "worker"]);
  // The run below starts each command as this ENTRYPOINT does.
  assert.deepEqual(JSON.parse(/^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1] ?? "null"), ["node", ...NODE_FLAGS, "bin/quire.js"]);
  const known = new Set([...cliSource.matchAll(/case "([a-z-]+)":/g)].map((m) => m[1]!));
  for (const [name, service] of built) {
    const [command, ...flags] = list(service.command ?? /^CMD\s+(.+)$/m.exec(dockerfile)![1]!.trim().replace(/^\[|\]$/g, "").replace(/"/g, "").split(/,\s*/));
    assert.ok(command && known.has(command), `${name}: ${command} is a quire command (${[...known].join(", ")})`);
    for (const flag of flags) assert.ok(cliSource.includes(`"${flag}"`), `${name}: the CLI reads ${flag}`);
  }
});

test("compose.yaml and Dockerfile: every QUIRE_* and AWS_* variable is read by the code and documented in the README", async () => {
  const documented = documentedVariables();
  const names = new Set<string>();
  for (const text of [composeText, dockerfile]) for (const m of text.matchAll(/\b((?:QUIRE|AWS)_[A-Z0-9_]+)\b/g)) names.add(m[1]!);
  assert.ok(names.size > 10, "the files set the configuration through variables");
  const unread: string[] = [];
  for (const n of names) if (!(await readByCode(n))) unread.push(n);
  assert.deepEqual(unread, [], "variables nothing reads");
  assert.deepEqual([...names].filter((n) => !documented.has(n)), [], "variables missing from the README's configuration table");
  // And their values pass the configuration's own checks, as each container would load them.
  for (const [name, service] of built) assert.doesNotThrow(() => loadConfig({ ...imageEnv(), ...environment(service) }), `${name}'s configuration loads`);
});

test("compose.yaml: ports and health checks agree with QUIRE_PORT and QUIRE_METRICS_PORT", () => {
  const api = byName("api");
  const apiPort = loadConfig({ ...imageEnv(), ...environment(api) }).port;
  assert.ok(new RegExp(`^EXPOSE\\s+${apiPort}\\b`, "m").test(dockerfile), `the image exposes ${apiPort}`);
  assert.ok(api.ports?.some((p) => String(p).endsWith(`:${apiPort}`)), `api publishes container port ${apiPort}`);
  // Without a healthcheck of its own, the api uses the image's, which asks QUIRE_PORT.
  if (api.healthcheck) assert.match(list(api.healthcheck.test).join(" "), new RegExp(`:${apiPort}/healthz`));
  else assert.match(dockerfile, /^HEALTHCHECK[\s\S]*process\.env\.QUIRE_PORT/m);

  const worker = byName("worker");
  const metricsPort = loadConfig({ ...imageEnv(), ...environment(worker) }).metricsPort;
  assert.ok(metricsPort !== undefined, "the worker sets QUIRE_METRICS_PORT");
  // A worker does not listen on QUIRE_PORT: the image's check would fail, so it must have its own.
  assert.ok(worker.healthcheck, "the worker overrides the image's health check");
  assert.match(list(worker.healthcheck.test).join(" "), new RegExp(`127\\.0\\.0\\.1:${metricsPort}/healthz`));
  assert.ok(!worker.ports?.length, "the worker publishes no port (it scales)");
});

test("compose.yaml: api and worker start after postgres is healthy and the bucket exists", () => {
  for (const name of ["api", "worker"]) {
    const deps = byName(name).depends_on as Record<string, { condition: string }>;
    assert.equal(deps?.postgres?.condition, "service_healthy", `${name} waits for a healthy postgres`);
    assert.equal(deps?.["minio-init"]?.condition, "service_completed_successfully", `${name} waits for the bucket`);
  }
  assert.ok(byName("postgres").healthcheck, "postgres has a health check to wait for");
  assert.ok(byName("minio").healthcheck, "minio has a health check to wait for");
  assert.equal((byName("minio-init").depends_on as Record<string, { condition: string }>).minio?.condition, "service_healthy");
});

test("compose.yaml: the services agree on credentials, database and bucket", () => {
  const pgEnv = environment(byName("postgres"));
  const minioEnv = environment(byName("minio"));
  const init = list(byName("minio-init").entrypoint).join(" ");
  for (const [name, service] of built) {
    const env = environment(service);
    const db = new URL(env.QUIRE_DATABASE_URL!);
    assert.deepEqual([db.hostname, db.username, db.password, db.pathname.slice(1)], ["postgres", pgEnv.POSTGRES_USER, pgEnv.POSTGRES_PASSWORD, pgEnv.POSTGRES_DB], `${name}'s database`);
    assert.deepEqual([env.AWS_ACCESS_KEY_ID, env.AWS_SECRET_ACCESS_KEY], [minioEnv.MINIO_ROOT_USER, minioEnv.MINIO_ROOT_PASSWORD], `${name}'s S3 credentials`);
    assert.equal(new URL(env.AWS_ENDPOINT_URL!).host, "minio:9000");
    assert.ok(init.includes(`http://minio:9000 ${minioEnv.MINIO_ROOT_USER} ${minioEnv.MINIO_ROOT_PASSWORD}`), "minio-init logs in as the root user");
    assert.ok(init.includes(`local/${bucketOf(env.QUIRE_BLOB_URL!)}`), `minio-init makes ${name}'s bucket`);
  }
});

function bucketOf(blobUrl: string): string {
  return new URL(blobUrl).hostname;
}

// ---------- the example, run on the stand-ins ----------

const skip = await postgresUnavailable();
const dbName = `quire_compose_${randomBytes(6).toString("hex")}`;
let dbCreated = false;
let s3: TestS3Server | undefined;
let dir: string | undefined;
const running: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

before(async () => {
  if (skip) return;
  await createDatabase(dbName);
  dbCreated = true;
  dir = await mkdtemp(join(tmpdir(), "quire-compose-"));
});

after(async () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await s3?.close();
  if (dbCreated) await dropDatabase(dbName);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The service's environment from the file, with only the stand-ins' addresses and credentials put in. */
function standInEnv(service: Service, volume: string, ports: { QUIRE_PORT: string; QUIRE_METRICS_PORT?: string }): Record<string, string> {
  const env = { ...imageEnv(), ...environment(service) };
  const db = new URL(env.QUIRE_DATABASE_URL!);
  const local = new URL(PG_ADMIN_URL);
  assert.equal(db.hostname, "postgres");
  Object.assign(db, { username: local.username, password: local.password, host: local.host, pathname: `/${dbName}` });
  const endpoint = new URL(env.AWS_ENDPOINT_URL!);
  assert.equal(endpoint.hostname, "minio");
  return {
    // A container starts with the image's environment and the service's, nothing of the host's but PATH.
    PATH: process.env.PATH!,
    ...env,
    QUIRE_DATABASE_URL: db.toString(),
    AWS_ENDPOINT_URL: s3!.endpoint,
    AWS_ACCESS_KEY_ID: s3!.env.AWS_ACCESS_KEY_ID!,
    AWS_SECRET_ACCESS_KEY: s3!.env.AWS_SECRET_ACCESS_KEY!,
    // The container's own /data volume.
    QUIRE_DATA_DIR: volume,
    ...ports,
  };
}

interface Container {
  child: ChildProcess;
  out(): string;
  exited: Promise<number | string>;
}

/** `node <flags> bin/quire.js <command>`, as the image's ENTRYPOINT runs it, from the project folder (the image's WORKDIR). */
function start(service: Service, env: Record<string, string>): Container {
  const child = spawn(process.execPath, [...NODE_FLAGS, "bin/quire.js", ...list(service.command)], { cwd: PROJECT_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  running.push(child);
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(signal ?? code ?? -1)));
  return { child, out: () => out, exited };
}

function runToEnd(argv: string[], env: Record<string, string>, timeoutMs = 10_000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: PROJECT_ROOT, env, stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.once("close", (code) => resolve({ code, out }));
  });
}

/** A healthcheck's `test` as argv (CMD form directly, CMD-SHELL under sh). */
function healthArgv(test: string[] | string): string[] {
  const t = list(test);
  if (typeof test === "string" || t[0] === "CMD-SHELL") return ["/bin/sh", "-c", typeof test === "string" ? test : t.slice(1).join(" ")];
  assert.equal(t[0], "CMD");
  return t.slice(1).map((a) => (a === "node" ? process.execPath : a));
}

/** The image's HEALTHCHECK, for a service without its own. */
function imageHealthcheck(): string[] {
  const m = /^HEALTHCHECK(?:\s+--\S+)*\s+CMD\s+(.+)$/m.exec(dockerfile.replace(/\\\r?\n\s*/g, " "));
  assert.ok(m, "the image has a HEALTHCHECK");
  return ["/bin/sh", "-c", m[1]!.trim().replace(/^node\b/, process.execPath)];
}

async function untilHealthy(name: string, argv: string[], env: Record<string, string>, container: Container, timeoutMs = 40_000): Promise<number> {
  const t0 = Date.now();
  let tries = 0;
  let last = "";
  while (Date.now() - t0 < timeoutMs) {
    assert.equal(container.child.exitCode, null, `${name} exited:\n${container.out()}`);
    tries++;
    const r = await runToEnd(argv, env, 5_000);
    if (r.code === 0) return tries;
    last = r.out;
    await sleep(250);
  }
  assert.fail(`${name} not healthy in ${timeoutMs} ms (${last}):\n${container.out()}`);
}

test("compose.yaml run on stand-ins: api and worker on PostgreSQL and S3, one PDF converted, clean stops", { skip, timeout: 90_000 }, async () => {
  const t0 = Date.now();
  // minio-init: the bucket exists before anything of Quire starts (Quire never creates buckets).
  const bucket = bucketOf(environment(byName("api")).QUIRE_BLOB_URL!);
  s3 = await startS3Server(`${bucket}-unused`);
  await s3.client().send(new CreateBucketCommand({ Bucket: bucket }));

  const ports = { api: String(await freePort()), worker: String(await freePort()), metrics: String(await freePort()) };
  const api = byName("api");
  const worker = byName("worker");
  const apiEnv = standInEnv(api, join(dir!, "api-data"), { QUIRE_PORT: ports.api });
  const workerEnv = standInEnv(worker, join(dir!, "worker-data"), { QUIRE_PORT: ports.worker, QUIRE_METRICS_PORT: ports.metrics });
  const apiC = start(api, apiEnv);
  const workerC = start(worker, workerEnv);

  // Each service's health check, as Compose would run it (the worker's with its port put in).
  const workerCheck = healthArgv(worker.healthcheck!.test).map((a) => a.replace(`:${environment(worker).QUIRE_METRICS_PORT}/`, `:${ports.metrics}/`));
  const apiTries = await untilHealthy("api", api.healthcheck ? healthArgv(api.healthcheck.test) : imageHealthcheck(), apiEnv, apiC);
  const workerTries = await untilHealthy("worker", workerCheck, workerEnv, workerC);
  const healthyAfter = Date.now() - t0;

  const apiBase = `http://127.0.0.1:${ports.api}`;
  const ready = await fetch(`${apiBase}/readyz`);
  assert.deepEqual([ready.status, await ready.json()], [200, { status: "ok", checks: { store: "ok", blobs: "ok", disk: "ok" } }]);

  // The account, made as the file's comment says (docker compose exec api node bin/quire.js accounts create alice).
  const exec = /docker compose exec (\S+) (node bin\/quire\.js accounts create \S+)/.exec(composeText);
  assert.ok(exec, "compose.yaml's comment says how to create an account");
  const made = await runToEnd(exec[2]!.split(" ").map((a) => (a === "node" ? process.execPath : a)), exec[1] === "worker" ? workerEnv : apiEnv);
  assert.equal(made.code, 0, made.out);
  const apiKey = /apiKey:\s+(\S+)/.exec(made.out)![1]!;
  const apiSecret = /apiSecret:\s+(\S+)/.exec(made.out)![1]!;

  const client = new QuireClient({ baseUrl: apiBase, apiKey, apiSecret });
  const uploaded = unwrap(await client.upload(join(FIXTURES, "pdf-quartz-firefox-1page.pdf"), { title: "compose example" })).document as { documentId: string };
  let state = "";
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
    const answer = JSON.stringify(await client.ok("documents.list", { pageSize: "10" }));
    state = new RegExp(`"documentId":"${uploaded.documentId}"[^}]*?"state":"(\\w)"`).exec(answer)?.[1] ?? "";
    if (state === "A" || state === "F") break;
  }
  assert.equal(state, "A", `the worker converted the upload:\n${workerC.out().slice(-3000)}`);

  const workerReady = await fetch(`http://127.0.0.1:${ports.metrics}/readyz`);
  assert.deepEqual([workerReady.status, await workerReady.json()], [200, { status: "ok", checks: { store: "ok", blobs: "ok", converter: "ok", disk: "ok" } }]);
  const apiMetrics = await (await fetch(`${apiBase}/metrics`)).text();
  assert.equal(sample(apiMetrics, "quire_api_requests_total", { action: "document.upload", code: "ok" }), 1);
  // The run is counted once its job is done, a moment after the document turned A in the same run.
  let finished: number | undefined;
  await until(async () => {
    const workerMetrics = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
    finished = sample(workerMetrics, "quire_jobs_finished_total", { outcome: "success" });
    return finished !== undefined;
  }, 10_000, "the worker to count its finished run", 100);
  assert.equal(finished, 1);

  // docker compose stop: SIGTERM, then SIGKILL after stop_grace_period; both must be gone before it.
  const stops = await Promise.all(
    ([["api", api, apiC], ["worker", worker, workerC]] as const).map(async ([name, service, c]) => {
      const s0 = Date.now();
      c.child.kill("SIGTERM");
      const grace = durationMs(service.stop_grace_period, 10_000);
      // Unreferenced: a timer left pending must not keep the test file running once both have stopped.
      const code = await Promise.race([c.exited, sleep(grace, "still running", { ref: false })]);
      assert.equal(code, 0, `${name} stops cleanly within its stop_grace_period (${grace} ms):\n${c.out().slice(-2000)}`);
      return `${name} ${Date.now() - s0} ms`;
    }),
  );
  process.stdout.write(
    `compose example: healthy after ${healthyAfter} ms (api check passed on try ${apiTries}, worker on try ${workerTries}); ` +
      `PDF converted; stopped: ${stops.join(", ")}; ${Date.now() - t0} ms in all\n`,
  );
});
