#!/usr/bin/env node
// Builds the repository's Dockerfile with a real builder, Debian's buildah (daemonless,
// `--isolation chroot`), and runs the image the way `docker run` would start it (pid 1 of a pid
// namespace of its own), used as a client would use it (health check, /readyz, an account made
// with the CLI as compose.yaml's comment says, a PDF and an office upload converted, a page image
// fetched, a `worker` container beside a `serve --no-worker` one, clean stops on SIGTERM).
//
// The one substitution: the Dockerfile's bases, node:20-bookworm(-slim), cannot be pulled here, so
// scripts/image/base-images.sh makes them on this machine (Debian bookworm debootstrapped from
// Debian's mirror plus the host's Node.js; see that script) and stores them in buildah's local
// storage under their official names; the build runs with `--pull=never`. Everything else comes
// from the Dockerfile as written, built by buildah; the build and the containers share the host's
// network, as `--network host` would.
//
// The containers run from the built image's file system (`buildah mount` of a working container),
// chrooted, with the image's configuration (`buildah inspect`): ENTRYPOINT, CMD, ENV, USER,
// WORKDIR, VOLUME, HEALTHCHECK. `buildah run` is not used for them: it runs one command to its
// end, not a service beside others with its own pid namespace to stop with SIGTERM.
//
// Needs root, debootstrap and buildah (scripts/image/install-builder.sh). Takes minutes (the first
// run also makes the bases); it is not part of `npm test`: run it as `npm run check:image`.
//   node --import tsx scripts/check-image.ts [--keep] [--image=NAME]
// --keep keeps the image and its working container; --image runs an image built before instead of
// building again.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chown, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { QuireClient } from "../src/client/quire-client.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURES = resolve(REPO, "../shared/fixtures");
const WORK = "/var/tmp/quire-image-check";
const BUILD_LOG = join(WORK, "last-build.log");
const IMAGE = "localhost/quire-check:latest";
const DOCKER_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const PDF_FIXTURE = "pdf-quartz-firefox-1page.pdf";
const OFFICE_FIXTURE = "odt-libreoffice73-odf13.odt";

/** A check that failed, as opposed to a bug of the check itself. */
class CheckError extends Error {}

const args = process.argv.slice(2);
const keep = args.includes("--keep");
const reuse = args.find((a) => a.startsWith("--image="))?.slice("--image=".length);
for (const a of args) if (a !== "--keep" && !a.startsWith("--image=")) fail(`unknown argument ${a}`);

// ---------- summary ----------

const steps: Array<{ name: string; ok: boolean; ms: number; detail: string }> = [];
const started = Date.now();
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
function log(line: string): void {
  process.stdout.write(`[${seconds(Date.now() - started).padStart(8)}] ${line}\n`);
}
function fail(message: string): never {
  throw new CheckError(message);
}

/**
 * Runs one named step; the first failure ends the check (later steps depend on earlier ones).
 * `fn` answers the line to show, or `{ value, detail }` when the next steps need a value.
 */
interface StepAnswer<T> {
  value: T;
  detail: string;
}

function isStepAnswer<T>(result: T | StepAnswer<T>): result is StepAnswer<T> {
  return typeof result === "object" && result !== null && "detail" in result;
}

async function step<T>(name: string, fn: () => Promise<T | StepAnswer<T>>): Promise<T> {
  const t0 = Date.now();
  log(`${name} …`);
  try {
    const result = await fn();
    const { value, detail } = isStepAnswer(result) ? result : { value: result, detail: result === undefined || result === null ? "" : String(result) };
    steps.push({ name, ok: true, ms: Date.now() - t0, detail });
    log(`PASS ${name} (${seconds(Date.now() - t0)})${detail ? `: ${detail}` : ""}`);
    return value;
  } catch (err) {
    steps.push({ name, ok: false, ms: Date.now() - t0, detail: err instanceof CheckError ? err.message : ((err as Error | undefined)?.stack ?? String(err)) });
    log(`FAIL ${name} (${seconds(Date.now() - t0)})`);
    throw err;
  }
}

// ---------- processes and mounts ----------

/** Runs a host command; rejects with its output's tail when it fails. */
interface RunOptions {
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  logTo?: string[];
  quiet?: boolean;
  timeoutMs?: number;
}

function run(cmd: string, argv: string[], { env = process.env, input, logTo, quiet = false, timeoutMs }: RunOptions = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, argv, { env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let out = "";
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      out += text;
      if (out.length > 200_000) out = out.slice(-100_000);
      logTo?.push(text);
      if (!quiet && process.env.CHECK_VERBOSE) process.stdout.write(text);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    const timer = timeoutMs ? setTimeout(() => child.kill("SIGKILL"), timeoutMs) : undefined;
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise(out);
      else reject(new CheckError(`${cmd} ${argv.join(" ").slice(0, 300)} exited with ${signal ?? code}:\n${out.slice(-4000)}`));
    });
    if (input !== undefined) {
      child.stdin!.on("error", () => {}); // a child that exits without reading its input is judged by its exit code
      child.stdin!.end(input);
    }
  });
}

const mounts: string[] = []; // innermost last

async function mountInto(root: string, kind: "proc" | "dev" | "sys"): Promise<void> {
  const target = join(root, kind);
  await mkdir(target, { recursive: true });
  if (kind === "proc") await run("mount", ["-t", "proc", "proc", target]);
  else {
    // Recursive, so /dev/pts, /dev/shm and /sys/fs/cgroup come along; slave, so nothing we do
    // under the chroot propagates back to the host's own mounts.
    await run("mount", ["--rbind", `/${kind}`, target]);
    await run("mount", ["--make-rslave", target]);
  }
  mounts.push(target);
}

async function bindMount(source: string, target: string): Promise<void> {
  await mkdir(target, { recursive: true });
  await run("mount", ["--bind", source, target]);
  mounts.push(target);
}

async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile("/proc/self/mountinfo", "utf8");
  return info
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((p): p is string => p !== undefined && p !== "" && (p === dir || p.startsWith(`${dir}/`)))
    .map((p) => p.replace(/\\040/g, " "));
}

async function unmountAll() {
  while (mounts.length > 0) {
    const target = mounts.pop()!;
    await run("umount", ["-R", target], { quiet: true }).catch(() => run("umount", ["-R", "-l", target], { quiet: true }).catch(() => {}));
  }
}

/** Chroots share the host's pid namespace: a process of the image is one whose root is the image's. */
/**
 * The pid namespaces of the containers started (each its own, as Docker's): their processes have a
 * root of their own (pivot_root), which /proc does not show as the image's folder.
 */
const containerNamespaces = new Set<string>();

/** Processes of the image: chrooted into it (`exec`), or in a container's pid namespace. */
async function processesIn(root: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const where = await readlink(`/proc/${name}/root`).catch(() => undefined);
    const namespace = await readlink(`/proc/${name}/ns/pid`).catch(() => "");
    if (where === root || containerNamespaces.has(namespace)) pids.push(Number(name));
  }
  return pids;
}

/** Every process chrooted anywhere under `dir`: what an interrupted check may leave behind. */
async function killProcessesUnder(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const where = await readlink(`/proc/${name}/root`).catch(() => "");
    const namespace = await readlink(`/proc/${name}/ns/pid`).catch(() => "");
    if (where === dir || where.startsWith(`${dir}/`) || containerNamespaces.has(namespace)) pids.push(Number(name));
  }
  return killAll(pids);
}

async function killAll(pids: number[]): Promise<number[]> {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  if (pids.length > 0) await sleep(500);
  return pids;
}

/** The argv a container would run, inside `root`, from `workdir`, with exactly `env`. */
function chrootArgv(root: string, workdir: string, argv: string[], user: string | undefined): string[] {
  // GNU chroot always starts in /; the shell changes to WORKDIR, then execs, so the pid stays the same.
  // USER: chroot switches to it (its primary group and no others), as Docker does.
  return [...(user ? [`--userspec=${user}`, "--groups="] : []), root, "/bin/sh", "-c", 'cd "$1" || exit 126; shift; exec "$@"', "sh", workdir, ...argv];
}

function containerEnv(env: Record<string, string>): Record<string, string> {
  // Docker adds HOSTNAME, and HOME when the image does not set it (root's, as we run as root).
  return { HOSTNAME: "quire-check", HOME: "/root", ...env, PATH: env.PATH ?? DOCKER_DEFAULT_PATH };
}

type Env = Record<string, string>;

// ---------- building with buildah ----------

interface Image {
  root: string;
  workdir: string;
  env: Env;
  cmd?: string[];
  entrypoint?: string[];
  user?: string;
  volumes?: string[];
  healthcheck?: { test: string[]; flags: Record<string, string> };
}

/** The image's configuration as buildah stores it in the Docker format (HEALTHCHECK is Docker's, so the build uses that format). */
interface DockerConfig {
  Env?: string[];
  Cmd?: string[] | null;
  Entrypoint?: string[] | null;
  User?: string;
  WorkingDir?: string;
  Volumes?: Record<string, unknown> | null;
  Healthcheck?: { Test?: string[]; Interval?: number; Timeout?: number; StartPeriod?: number; Retries?: number } | null;
}

const nsToDuration = (ns: number | undefined) => (ns ? `${Math.round(ns / 1e6)}ms` : undefined);

async function buildImage(): Promise<string> {
  await step("base images node:20-bookworm and node:20-bookworm-slim in buildah's storage (scripts/image/base-images.sh)", async () => {
    const out = await run("bash", [join(REPO, "scripts/image/base-images.sh")], { timeoutMs: 60 * 60_000 });
    return out.trim().split("\n").join("; ");
  });
  return step("buildah build --isolation chroot --pull=never --format docker (the repository's Dockerfile)", async () => {
    const buildLog: string[] = [];
    const argv = ["build", "--isolation", "chroot", "--pull=never", "--format", "docker", "--network", "host", "--layers", "-f", join(REPO, "Dockerfile"), "-t", IMAGE, REPO];
    try {
      await run("buildah", argv, { logTo: buildLog, timeoutMs: 60 * 60_000 });
    } finally {
      await writeFile(BUILD_LOG, buildLog.join(""));
    }
    const id = (await run("buildah", ["inspect", "--type", "image", "--format", "{{.FromImageID}}", IMAGE], { quiet: true })).trim();
    return { value: IMAGE, detail: `buildah ${argv.join(" ")}\nimage ${id.slice(0, 12)}, ${buildLog.join("").split("\n").filter((l) => /^(\[\d+\/\d+\] )?STEP \d+\/\d+/.test(l)).length} steps (${BUILD_LOG})` };
  });
}

let container: string | undefined;

/** A working container of the image, mounted: the file system the containers below are chrooted into. */
async function mountImage(name: string): Promise<Image> {
  const inspected = JSON.parse(await run("buildah", ["inspect", "--type", "image", name], { quiet: true })) as { Docker?: { config?: DockerConfig }; OCIv1?: { config?: DockerConfig } };
  const config = inspected.Docker?.config ?? inspected.OCIv1?.config ?? fail(`${name} has no configuration`);
  container = (await run("buildah", ["from", "--pull=never", name], { quiet: true })).trim().split("\n").pop()!;
  const root = (await run("buildah", ["mount", container], { quiet: true })).trim();
  imageRoot = root;
  const env = Object.fromEntries((config.Env ?? []).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
  const hc = config.Healthcheck;
  const flags = Object.fromEntries(
    Object.entries({ interval: nsToDuration(hc?.Interval), timeout: nsToDuration(hc?.Timeout), "start-period": nsToDuration(hc?.StartPeriod), retries: hc?.Retries ? String(hc.Retries) : undefined }).filter(
      (e): e is [string, string] => e[1] !== undefined,
    ),
  );
  return {
    root,
    workdir: config.WorkingDir || "/",
    env,
    cmd: config.Cmd ?? undefined,
    entrypoint: config.Entrypoint ?? undefined,
    user: config.User || undefined,
    volumes: Object.keys(config.Volumes ?? {}),
    healthcheck: hc?.Test && hc.Test[0] !== "NONE" ? { test: hc.Test, flags } : undefined,
  };
}

async function removeContainer(): Promise<void> {
  if (!container || keep) return;
  await run("buildah", ["umount", container], { quiet: true }).catch(() => {});
  await run("buildah", ["rm", container], { quiet: true }).catch(() => {});
}

// ---------- running the image ----------

function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePromise(port));
    });
  });
}

/**
 * `docker run`: ENTRYPOINT + CMD (or the given command) in a pid namespace of its own, where it is
 * pid 1 as in a container: orphans are reparented to it, and it alone must reap them.
 */
type Container = ReturnType<typeof startContainer>;

/**
 * The container's root is made with pivot_root in a mount namespace of its own, as a container
 * runtime makes it, not with chroot: the kernel refuses a chrooted process a user namespace, and
 * the worker's sandbox (bubblewrap, run as the image's unprivileged USER) needs one.
 */
const PIVOT = 'mount --rbind "$0" "$0" && cd "$0" && mkdir -p .host-root && pivot_root . .host-root && umount -l /.host-root && rmdir /.host-root && exec chroot "$@"';

function startContainer(image: Image, env: Env, command?: string[]) {
  const argv = [...(image.entrypoint ?? []), ...(command ?? image.cmd ?? [])];
  const pivot = ["/bin/sh", "-c", PIVOT, image.root, ...chrootArgv(".", image.workdir, argv, image.user)];
  const child = spawn("unshare", ["--mount", "--propagation", "private", "--pid", "--fork", `--mount-proc=${join(image.root, "proc")}`, ...pivot], {
    env: containerEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Its pid namespace, once its pid 1 is there: how its processes are found (processesIn).
  void (async () => {
    for (let i = 0; i < 100 && child.exitCode === null; i++) {
      const children = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").catch(() => "");
      const pid = Number(children.trim().split(/\s+/)[0]);
      const namespace = pid ? await readlink(`/proc/${pid}/ns/pid`).catch(() => "") : "";
      if (namespace) return void containerNamespaces.add(namespace);
      await sleep(50);
    }
  })();
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<string | number | null>((r) => child.once("exit", (code, signal) => r(signal ?? code)));
  return {
    argv,
    child,
    exited,
    get out() {
      return out;
    },
    running: () => child.exitCode === null && child.signalCode === null,
    /** The host pid of the container's pid 1 (unshare --fork waits for it, and passes its exit status on). */
    async pid1(): Promise<number> {
      const children = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").catch(() => "");
      const pid = Number(children.trim().split(/\s+/)[0]);
      if (!pid) fail("the container's pid 1 is gone");
      return pid;
    },
  };
}

/** Processes of the image that have exited and that nobody reaped. */
async function zombiesIn(root: string): Promise<string[]> {
  const zombies: string[] = [];
  for (const pid of await processesIn(root)) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    const m = /^\d+ \((.*)\) (\S)/.exec(stat);
    if (m?.[2] === "Z") zombies.push(`${pid} (${m[1]})`);
  }
  return zombies;
}

/** `docker exec`: a command in the running container's file system and environment. */
function exec(image: Image, env: Env, argv: string[], timeoutMs = 60_000): Promise<string> {
  return run("chroot", chrootArgv(image.root, image.workdir, argv, image.user), { env: containerEnv(env), timeoutMs, quiet: true });
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function durationMs(text: string | undefined, fallback: number): number {
  if (!text) return fallback;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms;
}

/**
 * The image's HEALTHCHECK, run as Docker runs it (inside, with the container's environment), until it
 * passes. Docker would wait `interval` between tries; we try every second, within start-period plus
 * retries × interval, which is when Docker would call the container unhealthy.
 */
async function waitHealthy(image: Image, env: Env, container: Container, test: NonNullable<Image["healthcheck"]>): Promise<string> {
  const flags = test.flags;
  const timeoutMs = durationMs(flags.timeout, 30_000);
  const budget = durationMs(flags["start-period"], 0) + Number(flags.retries ?? 3) * durationMs(flags.interval, 30_000);
  const argv = test.test[0] === "CMD-SHELL" ? ["/bin/sh", "-c", test.test[1] ?? ""] : test.test[0] === "CMD" ? test.test.slice(1) : test.test;
  const t0 = Date.now();
  let tries = 0;
  let last = "";
  while (Date.now() - t0 < budget) {
    if (!container.running()) fail(`the container exited (${await container.exited}) before it was healthy:\n${container.out.slice(-3000)}`);
    tries++;
    try {
      await exec(image, env, argv, timeoutMs);
      return `healthy after ${tries} tries, ${seconds(Date.now() - t0)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(1000);
  }
  return fail(`not healthy within ${seconds(budget)}: ${last}\n${container.out.slice(-3000)}`);
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: res.status, body: text };
  }
}

async function waitReady(url: string, container: Container, timeoutMs = 120_000): Promise<unknown> {
  const t0 = Date.now();
  let last: { status: number; body: unknown } | undefined;
  while (Date.now() - t0 < timeoutMs) {
    if (!container.running()) fail(`the container exited (${await container.exited}):\n${container.out.slice(-3000)}`);
    last = await getJson(url).catch((err: Error) => ({ status: 0, body: err.message }));
    if (last.status === 200) return last.body;
    await sleep(500);
  }
  return fail(`${url} not ready within ${seconds(timeoutMs)}: ${last?.status} ${JSON.stringify(last?.body)}`);
}

/** `docker compose exec api node bin/quire.js accounts create alice`, as compose.yaml's comment has it. */
async function composeAccountCommand(): Promise<string[]> {
  const compose = await readFile(join(REPO, "compose.yaml"), "utf8");
  const m = /docker compose exec \S+ (node \S+ accounts create \S+)/.exec(compose);
  if (!m) fail("compose.yaml's comment no longer says how to create an account");
  return m[1]!.split(" ");
}

interface Account {
  apiKey: string;
  apiSecret: string;
}

/** A document as the API answers it, the fields this check reads. */
interface AnsweredDocument {
  documentId: string;
  name: string;
  state: string;
  pageCount?: number;
}

/** The project's own client (src/client/quire-client.ts) signs every request, as any client would. */
const clientOf = (base: string, account: Account) => new QuireClient({ baseUrl: base, ...account });

async function upload(base: string, account: Account, file: string, title: string): Promise<AnsweredDocument> {
  const answer = await clientOf(base, account).upload(join(FIXTURES, file), { title });
  const doc = answer.rsp._content?.document as Partial<AnsweredDocument> | undefined;
  if (answer.rsp.stat !== "ok" || !doc?.documentId) fail(`upload of ${file} failed: ${JSON.stringify(answer)}`);
  return doc as AnsweredDocument;
}

function documentsIn(value: unknown, found: AnsweredDocument[] = []): AnsweredDocument[] {
  if (value && typeof value === "object") {
    const v = value as Partial<AnsweredDocument>;
    if (typeof v.documentId === "string" && typeof v.state === "string") found.push(v as AnsweredDocument);
    else for (const inner of Object.values(value)) documentsIn(inner, found);
  }
  return found;
}

/** The container's output less the access log's lines, which would hide the worker's. */
const withoutAccessLog = (out: string) => out.split("\n").filter((l) => !l.includes('"msg":"answered"')).join("\n");

async function waitConverted(base: string, account: Account, ids: string[], container: Container, timeoutMs = 240_000): Promise<AnsweredDocument[]> {
  const t0 = Date.now();
  let docs: AnsweredDocument[] = [];
  while (Date.now() - t0 < timeoutMs) {
    const answer = await clientOf(base, account).call("documents.list", { pageSize: "100" });
    docs = documentsIn(answer).filter((d) => ids.includes(d.documentId));
    const failed = docs.filter((d) => d.state === "F");
    if (failed.length > 0) fail(`conversion failed: ${JSON.stringify(failed)}\n${container.out.slice(-4000)}`);
    if (docs.length === ids.length && docs.every((d) => d.state === "A")) return docs;
    await sleep(1000);
  }
  return fail(`not converted within ${seconds(timeoutMs)}: ${JSON.stringify(docs.map((d) => [d.name, d.state]))}\n${withoutAccessLog(container.out).slice(-4000)}`);
}

/** `docker stop`: SIGTERM to the container's pid 1, and it must be gone with everything it started. */
async function stopContainer(container: Container, graceMs: number): Promise<string> {
  const pid1 = await container.pid1();
  const namespace = await readlink(`/proc/${pid1}/ns/pid`);
  process.kill(pid1, "SIGTERM");
  const t0 = Date.now();
  const code = await Promise.race([container.exited, sleep(graceMs, "timeout", { ref: false })]);
  if (code === "timeout") fail(`still running ${seconds(graceMs)} after SIGTERM`);
  if (code !== 0) fail(`exited with ${code} after SIGTERM:\n${container.out.slice(-3000)}`);
  const left: string[] = [];
  for (const name of await readdir("/proc")) {
    if (/^\d+$/.test(name) && (await readlink(`/proc/${name}/ns/pid`).catch(() => "")) === namespace) left.push(name);
  }
  if (left.length > 0) fail(`exited 0, but ${left.length} processes of the container run on (pids ${left.join(", ")})`);
  return `exit 0 after ${seconds(Date.now() - t0)}, no process of the container left`;
}

async function runImage(image: Image, runDir: string): Promise<void> {
  const data = join(runDir, "volume-data");
  await rm(data, { recursive: true, force: true });
  await mkdir(data, { recursive: true });
  // Docker fills a fresh named volume from the image, owner included: a non-root USER can write it.
  const imageData = await stat(join(image.root, "data")).catch(() => undefined);
  if (imageData) await chown(data, imageData.uid, imageData.gid);
  await writeFile(join(image.root, "etc/resolv.conf"), await readFile("/etc/resolv.conf"));
  await mountInto(image.root, "proc");
  await mountInto(image.root, "sys");
  await mountInto(image.root, "dev");
  for (const v of image.volumes ?? []) {
    // A fresh named volume per run; only the data volume gets a host folder, others stay in the image.
    await bindMount(v === "/data" ? data : await mkdtemp(join(runDir, "volume-")), join(image.root, v));
  }
  const healthcheck = image.healthcheck ?? fail("the image has no HEALTHCHECK");

  const port = await freePort();
  const env = { ...image.env, QUIRE_PORT: String(port) };
  const base = `http://127.0.0.1:${port}`;
  let container: Container;
  try {
    container = await step("run the image: ENTRYPOINT + CMD", async () => {
      const c = startContainer(image, env);
      await sleep(1000);
      if (!c.running()) fail(`exited at once (${await c.exited}):\n${c.out}`);
      return { value: c, detail: `${JSON.stringify(c.argv)} on port ${port}, /data a fresh folder` };
    });
  } catch {
    return;
  }
  try {
    await step("HEALTHCHECK passes (run inside the container)", () => waitHealthy(image, env, container, healthcheck));
    await step("/readyz answers 200 with every check ok", async () => {
      const body = (await waitReady(`${base}/readyz`, container)) as { status?: string; checks?: Record<string, string> } | undefined;
      const checks = body?.checks ?? {};
      if (body?.status !== "ok" || Object.values(checks).some((v) => v !== "ok") || !("converter" in checks)) fail(`unexpected /readyz: ${JSON.stringify(body)}`);
      return JSON.stringify(body);
    });
    const account = await step("create an account with the CLI (as compose.yaml's comment says)", async () => {
      const argv = await composeAccountCommand();
      const out = await exec(image, env, argv);
      const apiKey = /apiKey:\s+(\S+)/.exec(out)?.[1];
      const apiSecret = /apiSecret:\s+(\S+)/.exec(out)?.[1];
      if (!apiKey || !apiSecret) fail(`no credentials in: ${out}`);
      return { value: { apiKey, apiSecret }, detail: argv.join(" ") };
    });
    const docs = await step(`upload ${PDF_FIXTURE} and ${OFFICE_FIXTURE} (signed)`, async () => {
      const value = [await upload(base, account, PDF_FIXTURE, "A PDF in the image"), await upload(base, account, OFFICE_FIXTURE, "An office document in the image")];
      return { value, detail: value.map((d) => `${d.name} ${d.state}`).join(", ") };
    });
    const converted = await step("both reach state A (svc.documents.list)", async () => {
      const value = await waitConverted(base, account, docs.map((d) => d.documentId), container);
      return { value, detail: value.map((d) => `${d.name}: ${d.state}, ${d.pageCount} pages`).join("; ") };
    });
    await step("fetch a page image of the office document", async () => {
      const office = converted.find((d) => d.documentId === docs[1]!.documentId) ?? fail("the office document is not among the converted ones");
      const reader = await fetch(`${base}/alice/docs/${office.name}`);
      const html = await reader.text();
      const src = /\/alice\/docs\/[^"'\s]+\/pages\/read\/1\.jpg\?v=[^"'\s]+/.exec(html)?.[0];
      if (reader.status !== 200 || !src) fail(`reader page ${reader.status} without a page image link`);
      const res = await fetch(`${base}${src.replace(/&amp;/g, "&")}`);
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200 || bytes[0] !== 0xff || bytes[1] !== 0xd8) fail(`${src}: ${res.status} ${res.headers.get("content-type")}, not a JPEG`);
      return `${src.split("?")[0]}: ${bytes.length} bytes of JPEG`;
    });
    await step("no unreaped (zombie) process in the serve container", async () => {
      const zombies = await zombiesIn(image.root);
      if (zombies.length > 0) fail(`zombies: ${zombies.join(", ")}`);
      return `${(await processesIn(image.root)).length} processes, none a zombie`;
    });
    await step("/metrics answers", async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      if (!/quire_api_requests_total\{[^}]*action="document.upload"/.test(text)) fail(`no upload count in /metrics`);
      return "quire_api_requests_total counts the uploads";
    });
  } catch {
    // recorded by step()
  } finally {
    await step("SIGTERM the serve container", () => stopContainer(container, 40_000)).catch(() => {});
  }
  if (steps.some((s) => !s.ok)) return;

  // As compose.yaml runs it: a `worker` container and a `serve --no-worker` one. The worker restarts
  // LibreOffice after every conversion, so the kill-and-restart path runs with the worker as pid 1.
  const metricsPort = await freePort();
  const workerEnv = { ...env, QUIRE_METRICS_PORT: String(metricsPort), QUIRE_OFFICE_SLOTS: "1", QUIRE_OFFICE_RESTART_EVERY: "1" };
  const apiPort = await freePort();
  const apiEnv = { ...env, QUIRE_PORT: String(apiPort) };
  const apiBase = `http://127.0.0.1:${apiPort}`;
  const worker = startContainer(image, workerEnv, ["worker"]);
  let api: Container | undefined;
  try {
    await step("run the image with `worker` as command: /healthz on QUIRE_METRICS_PORT", async () => {
      await waitReady(`http://127.0.0.1:${metricsPort}/healthz`, worker, 60_000);
      return `${JSON.stringify(worker.argv)}, metrics port ${metricsPort}, QUIRE_OFFICE_SLOTS=1, QUIRE_OFFICE_RESTART_EVERY=1`;
    });
    await step("worker: /readyz ok (store, blobs, LibreOffice)", async () => JSON.stringify(await waitReady(`http://127.0.0.1:${metricsPort}/readyz`, worker, 60_000)));
    api = startContainer(image, apiEnv, ["serve", "--no-worker"]);
    const apiContainer = api;
    await step("run the image with `serve --no-worker` beside it: HEALTHCHECK passes", () => waitHealthy(image, apiEnv, apiContainer, healthcheck));
    await step(`worker converts two uploads of ${OFFICE_FIXTURE}, restarting LibreOffice after each`, async () => {
      const account = { apiKey: "", apiSecret: "" };
      const out = await exec(image, apiEnv, ["node", "bin/quire.js", "accounts", "create", "bob"]);
      account.apiKey = /apiKey:\s+(\S+)/.exec(out)?.[1] ?? fail(`no credentials in: ${out}`);
      account.apiSecret = /apiSecret:\s+(\S+)/.exec(out)?.[1] ?? fail(`no credentials in: ${out}`);
      const docs = [await upload(apiBase, account, OFFICE_FIXTURE, "Restart one"), await upload(apiBase, account, OFFICE_FIXTURE, "Restart two")];
      const done = await waitConverted(apiBase, account, docs.map((d) => d.documentId), worker);
      return done.map((d) => `${d.name}: ${d.state}`).join("; ");
    });
    await step("no unreaped (zombie) process after the restarts, worker still up 5 s later", async () => {
      await sleep(5_000);
      if (!worker.running()) fail(`the worker exited (${await worker.exited}):\n${worker.out.slice(-3000)}`);
      const again = await getJson(`http://127.0.0.1:${metricsPort}/healthz`);
      if (again.status !== 200) fail(`/healthz ${again.status}`);
      const zombies = await zombiesIn(image.root);
      if (zombies.length > 0) fail(`zombies: ${zombies.join(", ")}`);
      return `${(await processesIn(image.root)).length} processes in the two containers, none a zombie`;
    });
  } catch {
    // recorded by step()
  } finally {
    const started = api;
    if (started) await step("SIGTERM the serve --no-worker container", () => stopContainer(started, 40_000)).catch(() => {});
    await step("SIGTERM the worker container", () => stopContainer(worker, 45_000)).catch(() => {});
  }
}

// ---------- main ----------

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) fail("needs root (buildah, chroot, mount)");
  await mkdir(WORK, { recursive: true });
  const name = reuse ?? (await buildImage());
  const image = await step(`buildah from ${name} + buildah mount: the image's file system and configuration`, async () => {
    const value = await mountImage(name);
    return { value, detail: `${value.root}; ENTRYPOINT ${JSON.stringify(value.entrypoint)} CMD ${JSON.stringify(value.cmd)} USER ${value.user} WORKDIR ${value.workdir}` };
  });
  runDir = await mkdtemp(join(WORK, "run-"));
  await inspectImage(image);
  await runImage(image, runDir);
}

/**
 * What is in the image, before it runs: its size, and the system packages. The Dockerfile lists
 * the packages scripts/install-system-deps.sh installs on a developer's machine, less the browser
 * only the tests use; the two lists must not drift apart.
 */
async function inspectImage(image: Image): Promise<void> {
  await step("image size (file system, uncompressed)", async () => (await run("du", ["-sxh", image.root])).split("\t")[0] ?? "");
  await step("image: the packages of scripts/install-system-deps.sh are installed, Chromium is not", async () => {
    const script = await readFile(join(REPO, "scripts/install-system-deps.sh"), "utf8");
    const listed = /^packages=\(([^)]*)\)/m.exec(script)?.[1]?.split(/\s+/).filter(Boolean) ?? fail("no packages=(…) in install-system-deps.sh");
    // The browser the tests use (chromium, its headless shell): in the list, never in the image.
    const isBrowser = (p: string) => p.startsWith("chromium");
    const wanted = listed.filter((p) => !isBrowser(p));
    const status = await run("chroot", [image.root, "dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n"], { quiet: true, env: containerEnv(image.env) });
    const installed = new Set(status.split("\n").filter((l) => l.endsWith(" installed")).map((l) => l.split(" ")[0]));
    const missing = wanted.filter((p) => !installed.has(p));
    if (missing.length > 0) fail(`missing from the image: ${missing.join(", ")}`);
    if ([...installed].some((p) => p !== undefined && isBrowser(p))) fail("Chromium is in the image");
    return `${wanted.length} packages present: ${wanted.join(" ")}`;
  });
}

let runDir: string | undefined;
/** What the containers run in: the mounted image, and the run's own folders. */
const roots = () => [WORK, ...(imageRoot ? [imageRoot] : [])];
let imageRoot: string | undefined;
async function cleanUp(): Promise<void> {
  for (const root of roots()) await killProcessesUnder(root);
  await unmountAll();
  await removeContainer();
}
const onSignal = async () => {
  log("interrupted: cleaning up");
  await cleanUp();
  process.exit(130);
};
process.once("SIGINT", () => void onSignal());
process.once("SIGTERM", () => void onSignal());
// Mounts must never outlive the check, whatever goes wrong.
process.once("uncaughtException", (err: Error) => {
  process.stderr.write(`${err?.stack ?? String(err)}\n`);
  void cleanUp().finally(() => process.exit(1));
});

try {
  await main();
} catch (err) {
  if (!steps.some((s) => !s.ok)) steps.push({ name: "check", ok: false, ms: 0, detail: err instanceof CheckError ? err.message : ((err as Error | undefined)?.stack ?? String(err)) });
} finally {
  for (const root of roots()) await killProcessesUnder(root);
  await unmountAll();
}

const leftMounts = (await Promise.all(roots().map((r) => mountsUnder(r)))).flat().filter((m) => m !== imageRoot);
if (leftMounts.length > 0) steps.push({ name: "no mounts left", ok: false, ms: 0, detail: leftMounts.join(", ") });
else await removeContainer();
if (runDir && leftMounts.length === 0) await rm(runDir, { recursive: true, force: true }).catch(() => {});

const ok = steps.length > 0 && steps.every((s) => s.ok);
process.stdout.write(`\n==== check-image summary (${new Date().toISOString()}) ====\n`);
for (const s of steps) {
  process.stdout.write(`${s.ok ? "PASS" : "FAIL"}  ${seconds(s.ms).padStart(8)}  ${s.name}${s.detail ? `\n                ${String(s.detail).split("\n").join("\n                ")}` : ""}\n`);
}
process.stdout.write(`${ok ? "PASS" : "FAIL"}: ${steps.filter((s) => s.ok).length}/${steps.length} steps, ${seconds(Date.now() - started)} in all${keep ? `; image ${IMAGE} and container ${container} kept` : ""}\n`);
if (!ok && existsSync(BUILD_LOG)) process.stdout.write(`(buildah's output: ${BUILD_LOG})\n`);
process.exit(ok ? 0 : 1);
