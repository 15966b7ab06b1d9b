#!/usr/bin/env node
// Builds the repository's Dockerfile and runs the image, on a machine without a Docker engine:
// every instruction is interpreted here, RUN steps run in a chroot, and the image is then started
// the way `docker run` would start it (pid 1 of a pid namespace of its own) and used as a client
// would use it (health check, /readyz, an account made with the CLI as compose.yaml's comment
// says, a PDF and an office upload converted, a page image fetched, a `worker` container beside a
// `serve --no-worker` one, clean stops on SIGTERM).
//
// The one substitution: the official node:20-bookworm(-slim) images are Debian bookworm
// (debootstrapped from deb.debian.org; minbase for -slim; for the full image the buildpack-deps
// packages that matter: build-essential, python3, git, ca-certificates, curl) plus Node.js. The
// Node.js here is the host's Debian package `nodejs` (node, npm, corepack and its C headers)
// copied to /usr/local as the official image lays it out, with two lines in npm's global config
// (/usr/local/etc/npmrc) for this machine's network: `nodedir=/usr/local`, because nodejs.org and
// GitHub (headers, prebuilt binaries) are out of reach, so native modules compile against the
// copied headers; and `cafile`, the host's CA bundle, because the npm registry is reached through
// a TLS-intercepting proxy. (So npm is the host's, 11.x, where the official image has 10.x, and
// there is no yarn.) Everything else comes from the Dockerfile as written; the containers share
// the host's network, as `--network host` would.
//
// Needs root, debootstrap and chroot. Bases are cached as tarballs in /var/cache/quire-dockerfile-check;
// builds go to /var/tmp/quire-dockerfile-check/run-* and are removed afterwards (unless --keep).
//   node --import tsx scripts/check-dockerfile.ts [--keep] [--image=/var/tmp/quire-dockerfile-check/run-…]
// --image runs an image kept by an earlier --keep instead of building again.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, copyFile, cp, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { basename, dirname, join, posix, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { QuireClient } from "../src/client/quire-client.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURES = resolve(REPO, "../shared/fixtures");
const WORK = "/var/tmp/quire-dockerfile-check";
const CACHE = "/var/cache/quire-dockerfile-check";
const BUILD_LOG = join(WORK, "last-build.log");
const MIRROR = "http://deb.debian.org/debian";
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
async function processesIn(root: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const where = await readlink(`/proc/${name}/root`).catch(() => undefined);
    if (where === root) pids.push(Number(name));
  }
  return pids;
}

async function killProcessesIn(root: string): Promise<number[]> {
  const pids = await processesIn(root);
  return killAll(pids);
}

/** Every process chrooted anywhere under `dir`: what an interrupted check may leave behind. */
async function killProcessesUnder(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const where = await readlink(`/proc/${name}/root`).catch(() => "");
    if (where.startsWith(`${dir}/`)) pids.push(Number(name));
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

// ---------- the Dockerfile ----------

/** Instructions with their arguments: continuations joined, comments and blank lines dropped. */
interface Instruction {
  line: number;
  keyword: string;
  rest: string;
}

function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let buffer = "";
  let line0 = 0;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (trimmed.startsWith("#") || (trimmed === "" && buffer === "")) continue; // comments, also inside continuations
    if (buffer === "") line0 = i + 1;
    const continued = /\\[ \t]*$/.test(line);
    buffer += continued ? line.replace(/\\[ \t]*$/, "") : line;
    if (continued && i < lines.length - 1) continue;
    const m = /^\s*([A-Za-z]+)(?:\s+([\s\S]*))?$/.exec(buffer);
    if (!m) fail(`Dockerfile line ${line0}: cannot read ${JSON.stringify(buffer.slice(0, 80))}`);
    instructions.push({ line: line0, keyword: m[1]!.toUpperCase(), rest: (m[2] ?? "").trim() });
    buffer = "";
  }
  return instructions;
}

/** Leading `--name=value` flags, then the remainder. */
function takeFlags(rest: string, allowed: string[], where: string): { flags: Record<string, string>; remainder: string } {
  const flags: Record<string, string> = {};
  let remainder = rest;
  for (;;) {
    const m = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(remainder);
    if (!m) break;
    const name = m[1]!;
    if (!allowed.includes(name)) fail(`${where}: flag --${name} is not supported by this check`);
    flags[name] = m[2] ?? "true";
    remainder = remainder.slice(m[0].length);
  }
  return { flags, remainder };
}

function jsonForm(rest: string): string[] | undefined {
  if (!rest.startsWith("[")) return undefined;
  try {
    const value: unknown = JSON.parse(rest);
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as string[];
  } catch {
    // Docker treats an unparsable [..] as shell form
  }
  return undefined;
}

/** A command in exec or shell form, as Docker stores it (shell form runs under /bin/sh -c). */
function commandForm(rest: string): string[] {
  return jsonForm(rest) ?? ["/bin/sh", "-c", rest];
}

type Env = Record<string, string>;

function expand(text: string, env: Env): string {
  return text.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_, a: string | undefined, b: string) => env[a ?? b] ?? "");
}

/** Words of ENV/COPY arguments: quotes and backslashes as Docker reads them, $VAR expanded. */
function words(text: string, env: Env): string[] {
  const out: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = "";
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "\\" && i + 1 < text.length) word += text[++i];
    else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) fail(`unterminated quote in ${text}`);
      word += text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let quoted = "";
      for (; j < text.length && text[j] !== '"'; j++) quoted += text[j] === "\\" && j + 1 < text.length ? text[++j] : text[j];
      if (j >= text.length) fail(`unterminated quote in ${text}`);
      word += expand(quoted, env);
      i = j;
    } else if (c === "$") {
      const m = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(text.slice(i));
      if (m) {
        word += env[(m[1] ?? m[2])!] ?? "";
        i += m[0].length - 1;
      } else word += c;
    } else word += c;
  }
  if (inWord) out.push(word);
  return out;
}

// ---------- .dockerignore (moby's patternmatcher rules) ----------

function globToRegExp(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      i++;
      if (pattern[i + 1] === "/") {
        i++;
        re += "(?:.*/)?";
      } else re += ".*";
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "\\" && i + 1 < pattern.length) re += `\\${pattern[++i]}`;
    else re += /[.+^${}()|[\]]/.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${re}$`);
}

interface IgnoreRule {
  negate: boolean;
  re: RegExp;
}

function readIgnore(text: string): IgnoreRule[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const negate = l.startsWith("!");
      const cleaned = posix.normalize((negate ? l.slice(1) : l).trim()).replace(/^\/+/, "").replace(/\/+$/, "");
      return { negate, re: globToRegExp(cleaned) };
    });
}

/** A path is left out when the last rule matching it, or one of its parent folders, excludes it. */
function isIgnored(rules: IgnoreRule[], rel: string): boolean {
  const parts = rel.split("/");
  let ignored = false;
  for (const rule of rules) {
    let match = false;
    for (let n = parts.length; n >= 1 && !match; n--) match = rule.re.test(parts.slice(0, n).join("/"));
    if (match) ignored = !rule.negate;
  }
  return ignored;
}

// ---------- base images ----------

/** node:20-bookworm[-slim] and their pinned variants; anything else has no stand-in here. */
type Variant = "slim" | "full";

function baseFor(image: string): Variant {
  const m = /^(?:docker\.io\/)?(?:library\/)?node:20(?:\.\d+){0,2}-bookworm(-slim)?(?:@sha256:[0-9a-f]{64})?$/.exec(image);
  if (!m) fail(`no stand-in for base image ${image} (only node:20-bookworm and node:20-bookworm-slim)`);
  return m[1] ? "slim" : "full";
}

const DEBIAN_SOURCES = `Types: deb
URIs: ${MIRROR}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`;

// What debian:bookworm-slim leaves out of every package it installs (debuerreotype's slimification).
const SLIM_DPKG_EXCLUDES = `path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
`;

/** A debootstrapped bookworm with the Debian image's own apt set-up, as a cached tarball. */
async function baseTarball(variant: Variant): Promise<{ tarball: string; cached: boolean }> {
  const tarball = join(CACHE, `bookworm-${variant}.tar`);
  if (existsSync(tarball)) return { tarball, cached: true };
  await mkdir(CACHE, { recursive: true });
  const dir = join(WORK, "bases", `${variant}-build`);
  // debootstrap removes /debootstrap when it has finished: a finished tree from an interrupted run is reused.
  const finished = existsSync(join(dir, "etc/debian_version")) && !existsSync(join(dir, "debootstrap"));
  if (!finished) {
    if ((await mountsUnder(dir)).length > 0) fail(`${dir} has mounts in it; unmount them first`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const extra = variant === "slim" ? ["--variant=minbase"] : ["--include=build-essential,python3,git,ca-certificates,curl"];
    await run("debootstrap", [...extra, "bookworm", dir, MIRROR], { timeoutMs: 30 * 60_000 });
  }
  if ((await mountsUnder(dir)).length > 0) fail(`${dir} still has mounts after debootstrap`);
  await rm(join(dir, "var/cache/apt/archives"), { recursive: true, force: true });
  await mkdir(join(dir, "var/cache/apt/archives/partial"), { recursive: true });
  await rm(join(dir, "var/lib/apt/lists"), { recursive: true, force: true });
  await mkdir(join(dir, "var/lib/apt/lists/partial"), { recursive: true });
  await run("tar", ["-C", dir, "--numeric-owner", "-cf", `${tarball}.part`, "."]);
  await rename(`${tarball}.part`, tarball);
  await rm(dir, { recursive: true, force: true });
  return { tarball, cached: false };
}

// Debian's images clean apt's caches after every install and fetch no translations.
const DOCKER_CLEAN = `DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
`;

/** What Debian's own image set-up (debuerreotype) adds to a debootstrapped tree. */
async function debianImageSetup(root: string, variant: Variant): Promise<void> {
  await rm(join(root, "etc/apt/sources.list"), { force: true });
  await mkdir(join(root, "etc/apt/sources.list.d"), { recursive: true });
  await writeFile(join(root, "etc/apt/sources.list.d/debian.sources"), DEBIAN_SOURCES);
  // Packages installed during a build never start services.
  await writeFile(join(root, "usr/sbin/policy-rc.d"), "#!/bin/sh\nexit 101\n", { mode: 0o755 });
  await writeFile(join(root, "etc/apt/apt.conf.d/docker-clean"), DOCKER_CLEAN);
  await writeFile(join(root, "etc/apt/apt.conf.d/docker-no-languages"), 'Acquire::Languages "none";\n');
  await writeFile(join(root, "etc/apt/apt.conf.d/docker-autoremove-suggests"), 'Apt::AutoRemove::SuggestsImportant "false";\n');
  if (variant === "slim") await writeFile(join(root, "etc/dpkg/dpkg.cfg.d/docker"), SLIM_DPKG_EXCLUDES);
  else await rm(join(root, "etc/dpkg/dpkg.cfg.d/docker"), { force: true });
}

/** The substitution named in the header: the host's Node.js laid out as the official image has it. */
async function installNode(root: string): Promise<Env> {
  await copyFile("/usr/bin/node", join(root, "usr/local/bin/node"));
  await chmod(join(root, "usr/local/bin/node"), 0o755);
  await mkdir(join(root, "usr/local/lib/node_modules"), { recursive: true });
  for (const m of ["npm", "corepack"]) {
    await cp(`/usr/lib/node_modules/${m}`, join(root, `usr/local/lib/node_modules/${m}`), { recursive: true, verbatimSymlinks: true });
  }
  for (const [link, target] of <Array<[string, string]>>[
    ["npm", "../lib/node_modules/npm/bin/npm-cli.js"],
    ["npx", "../lib/node_modules/npm/bin/npx-cli.js"],
    ["corepack", "../lib/node_modules/corepack/dist/corepack.js"],
  ]) {
    await rm(join(root, "usr/local/bin", link), { force: true });
    await symlink(target, join(root, "usr/local/bin", link));
  }
  await cp("/usr/include/node", join(root, "usr/local/include/node"), { recursive: true, verbatimSymlinks: true });
  await mkdir(join(root, "usr/local/etc"), { recursive: true });
  // This machine's network, not the image: see the header.
  await copyFile("/etc/ssl/certs/ca-certificates.crt", join(root, "usr/local/etc/check-dockerfile-ca.pem"));
  await writeFile(join(root, "usr/local/etc/npmrc"), "nodedir=/usr/local\ncafile=/usr/local/etc/check-dockerfile-ca.pem\n");
  return { NODE_VERSION: process.versions.node };
}

// ---------- building ----------

async function copyContextPath(rules: IgnoreRule[], src: string, dest: string, rel: string): Promise<number> {
  const st = await lstat(src);
  if (st.isDirectory()) {
    // An ignored folder is skipped whole unless a `!` rule may bring something inside it back.
    if (rel !== "" && isIgnored(rules, rel) && !rules.some((r) => r.negate)) return 0;
    await mkdir(dest, { recursive: true });
    let n = 0;
    for (const name of await readdir(src)) n += await copyContextPath(rules, join(src, name), join(dest, name), rel === "" ? name : `${rel}/${name}`);
    return n;
  }
  if (isIgnored(rules, rel)) return 0;
  await mkdir(dirname(dest), { recursive: true });
  await rm(dest, { force: true, recursive: true });
  if (st.isSymbolicLink()) await symlink(await readlink(src), dest);
  else {
    await copyFile(src, dest);
    await chmod(dest, st.mode & 0o7777);
  }
  return 1;
}

/** What a stage's instructions set beyond its files and environment: the image's configuration. */
interface ImageConfig {
  cmd?: string[];
  entrypoint?: string[];
  user?: string;
  volumes?: string[];
  exposed?: string[];
  healthcheck?: { test: string[]; flags: Record<string, string> };
}

interface Stage {
  name: string | undefined;
  root: string;
  workdir: string;
  env: Env;
  config: ImageConfig;
  cmdSet: boolean;
}

/** The built image as the running steps read it (image.json). */
type Image = ImageConfig & { root: string; workdir: string; env: Env };

async function instructionCopy(ins: Instruction, stage: Stage, stages: Stage[], rules: IgnoreRule[]): Promise<string> {
  const { flags, remainder } = takeFlags(ins.rest, ["from"], `COPY (line ${ins.line})`);
  const parts = jsonForm(remainder) ?? words(remainder, stage.env);
  if (parts.length < 2) fail(`COPY (line ${ins.line}) needs a source and a destination`);
  const dest = parts.at(-1)!;
  const sources = parts.slice(0, -1);
  if (sources.some((s) => /[*?[]/.test(s))) fail(`COPY (line ${ins.line}): wildcards are not supported by this check`);
  const destAbs = posix.resolve(stage.workdir, dest);
  const destIsDir = dest.endsWith("/") || dest === "." || sources.length > 1;
  let from: Stage | undefined;
  if (flags.from !== undefined) {
    from = stages.find((s) => s.name === flags.from) ?? stages[Number(flags.from)];
    if (!from) fail(`COPY --from=${flags.from} (line ${ins.line}): no such stage`);
  }
  let files = 0;
  for (const source of sources) {
    const target = (isDir: boolean) => join(stage.root, isDir || !destIsDir ? destAbs : posix.join(destAbs, posix.basename(source)));
    if (from) {
      const src = join(from.root, posix.resolve(from.workdir, source));
      if (!existsSync(src)) fail(`COPY --from=${flags.from} ${source} (line ${ins.line}): not found in that stage`);
      const isDir = (await lstat(src)).isDirectory();
      await mkdir(isDir ? target(true) : dirname(target(false)), { recursive: true });
      await run("cp", ["-a", isDir ? `${src}/.` : src, target(isDir)]);
      files += isDir ? Number((await run("find", [src, "-type", "f"])).split("\n").length - 1) : 1;
    } else {
      const rel = posix.normalize(source).replace(/^\/+/, "").replace(/\/+$/, "");
      const src = resolve(REPO, rel);
      if (relative(REPO, src).startsWith("..")) fail(`COPY ${source} (line ${ins.line}): outside the build context`);
      if (!existsSync(src) || (rel !== "." && isIgnored(rules, rel))) fail(`COPY ${source} (line ${ins.line}): not in the build context (missing or .dockerignored)`);
      const isDir = (await lstat(src)).isDirectory();
      files += await copyContextPath(rules, src, target(isDir), rel === "." ? "" : rel);
    }
  }
  return `${files} files`;
}

async function runStep(stage: Stage, argv: string[], buildLog: string[]): Promise<void> {
  await writeFile(join(stage.root, "etc/resolv.conf"), await readFile("/etc/resolv.conf"));
  try {
    await mountInto(stage.root, "proc");
    await mountInto(stage.root, "sys");
    await mountInto(stage.root, "dev");
    if (!existsSync(join(stage.root, "dev/pts/ptmx"))) fail("/dev/pts is not mounted in the chroot");
    await run("chroot", chrootArgv(stage.root, stage.workdir, argv, stage.config.user), { env: containerEnv(stage.env), logTo: buildLog });
  } finally {
    await killProcessesIn(stage.root);
    await unmountAll();
  }
}

async function build(runDir: string): Promise<Image> {
  const dockerfile = await readFile(join(REPO, "Dockerfile"), "utf8");
  const rules = existsSync(join(REPO, ".dockerignore")) ? readIgnore(await readFile(join(REPO, ".dockerignore"), "utf8")) : [];
  const instructions = parseDockerfile(dockerfile);
  const stages: Stage[] = [];
  const buildLog: string[] = [];
  let stage: Stage | undefined;
  try {
    for (const ins of instructions) {
      const label = `${ins.keyword} ${ins.rest.replace(/\s+/g, " ").slice(0, 90)} (line ${ins.line})`;
      if (ins.keyword !== "FROM" && !stage) fail(`line ${ins.line}: ${ins.keyword} before FROM`);
      await step(label, async (): Promise<string> => {
        // Every instruction but FROM has a stage (checked above).
        const current = stage!;
        switch (ins.keyword) {
          case "FROM": {
            const { remainder } = takeFlags(ins.rest, [], `FROM (line ${ins.line})`);
            const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(remainder);
            if (!m) fail(`FROM (line ${ins.line}): cannot read ${remainder}`);
            const root = join(runDir, `stage-${stages.length}`);
            await mkdir(root, { recursive: true });
            const from = m[1]!;
            const parent = stages.find((s) => s.name === from);
            stage = { name: m[2], root, workdir: "/", env: {}, config: {}, cmdSet: false };
            if (parent) {
              await run("cp", ["-a", `${parent.root}/.`, root]);
              Object.assign(stage, { workdir: parent.workdir, env: { ...parent.env }, config: structuredClone(parent.config) });
            } else {
              const variant = baseFor(from);
              const { tarball, cached } = await baseTarball(variant);
              await run("tar", ["-C", root, "--numeric-owner", "-xf", tarball]);
              await debianImageSetup(root, variant);
              const nodeEnv = await installNode(root);
              stage.env = { PATH: DOCKER_DEFAULT_PATH, ...nodeEnv };
              stage.config = { cmd: ["node"], entrypoint: [] };
              stages.push(stage);
              return `debootstrap bookworm ${variant === "slim" ? "minbase" : "+ buildpack-deps essentials"} (${cached ? "cached" : "fresh"}) + host Node ${process.versions.node}`;
            }
            stages.push(stage);
            return `from stage ${parent.name}`;
          }
          case "WORKDIR":
            current.workdir = posix.resolve(current.workdir, expand(ins.rest, current.env));
            await mkdir(join(current.root, current.workdir), { recursive: true });
            return current.workdir;
          case "ENV": {
            const parts = words(ins.rest, current.env);
            const first = parts[0];
            if (first !== undefined && !first.includes("=")) {
              // legacy `ENV name value…`
              current.env[first] = ins.rest.slice(ins.rest.indexOf(first) + first.length).trim();
            } else {
              for (const p of parts) {
                const eq = p.indexOf("=");
                if (eq <= 0) fail(`ENV (line ${ins.line}): ${p} is not name=value`);
                current.env[p.slice(0, eq)] = p.slice(eq + 1);
              }
            }
            return parts.join(" ");
          }
          case "COPY":
            return instructionCopy(ins, current, stages, rules);
          case "RUN": {
            const { remainder } = takeFlags(ins.rest, [], `RUN (line ${ins.line})`);
            const before = buildLog.length;
            try {
              await runStep(current, commandForm(remainder), buildLog);
            } finally {
              await writeFile(BUILD_LOG, buildLog.join(""));
            }
            return `${buildLog.slice(before).join("").split("\n").length} lines of output (${BUILD_LOG})`;
          }
          case "VOLUME": {
            const vols = jsonForm(ins.rest) ?? words(ins.rest, current.env);
            for (const v of vols) await mkdir(join(current.root, v), { recursive: true });
            current.config.volumes = [...(current.config.volumes ?? []), ...vols];
            return vols.join(" ");
          }
          case "USER":
            current.config.user = expand(ins.rest, current.env);
            return current.config.user;
          case "EXPOSE":
            current.config.exposed = [...(current.config.exposed ?? []), ...words(ins.rest, current.env)];
            return current.config.exposed.join(" ");
          case "HEALTHCHECK": {
            const { flags, remainder } = takeFlags(ins.rest, ["interval", "timeout", "start-period", "start-interval", "retries"], `HEALTHCHECK (line ${ins.line})`);
            if (/^NONE$/i.test(remainder)) {
              current.config.healthcheck = undefined;
              return "none";
            }
            const m = /^CMD\s+([\s\S]+)$/i.exec(remainder);
            if (!m) fail(`HEALTHCHECK (line ${ins.line}): expected CMD or NONE`);
            current.config.healthcheck = { test: commandForm(m[1]!.trim()), flags };
            return JSON.stringify(flags);
          }
          case "ENTRYPOINT":
            current.config.entrypoint = commandForm(ins.rest);
            if (!current.cmdSet) current.config.cmd = []; // Docker drops a CMD inherited from the base when ENTRYPOINT is set
            return JSON.stringify(current.config.entrypoint);
          case "CMD":
            current.config.cmd = commandForm(ins.rest);
            current.cmdSet = true;
            return JSON.stringify(current.config.cmd);
          default:
            return fail(`line ${ins.line}: this check does not know the ${ins.keyword} instruction; teach it before relying on it`);
        }
      });
    }
  } finally {
    await unmountAll();
  }
  if (!stage) fail("the Dockerfile has no FROM");
  const image = { root: stage.root, workdir: stage.workdir, env: stage.env, ...stage.config };
  await writeFile(join(runDir, "image.json"), JSON.stringify(image, null, 2));
  // Earlier stages are not part of the image.
  for (const s of stages) if (s !== stage) await removeTree(s.root);
  return image;
}

async function removeTree(dir: string): Promise<void> {
  const left = await mountsUnder(dir);
  if (left.length > 0) fail(`refusing to remove ${dir}: still mounted: ${left.join(", ")}`);
  await rm(dir, { recursive: true, force: true });
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

function startContainer(image: Image, env: Env, command?: string[]) {
  const argv = [...(image.entrypoint ?? []), ...(command ?? image.cmd ?? [])];
  const child = spawn("unshare", ["--pid", "--fork", `--mount-proc=${join(image.root, "proc")}`, "chroot", ...chrootArgv(image.root, image.workdir, argv, image.user)], {
    env: containerEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
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
  return fail(`not converted within ${seconds(timeoutMs)}: ${JSON.stringify(docs.map((d) => [d.name, d.state]))}\n${container.out.slice(-4000)}`);
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
  if (process.getuid?.() !== 0) fail("needs root (debootstrap, chroot, mount)");
  await mkdir(WORK, { recursive: true });
  let image: Image;
  if (reuse) {
    runDir = resolve(reuse);
    image = JSON.parse(await readFile(join(runDir, "image.json"), "utf8")) as Image;
    log(`reusing the image built in ${runDir}`);
  } else {
    runDir = await mkdtemp(join(WORK, "run-"));
    log(`building ${join(REPO, "Dockerfile")} in ${runDir}`);
    image = await build(runDir);
  }
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
    const wanted = listed.filter((p) => p !== "chromium");
    const status = await run("chroot", [image.root, "dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n"], { quiet: true, env: containerEnv(image.env) });
    const installed = new Set(status.split("\n").filter((l) => l.endsWith(" installed")).map((l) => l.split(" ")[0]));
    const missing = wanted.filter((p) => !installed.has(p));
    if (missing.length > 0) fail(`missing from the image: ${missing.join(", ")}`);
    if (installed.has("chromium")) fail("Chromium is in the image");
    return `${wanted.length} packages present: ${wanted.join(" ")}`;
  });
}

let runDir: string | undefined;
const onSignal = async () => {
  log("interrupted: cleaning up");
  await killProcessesUnder(WORK);
  await unmountAll();
  process.exit(130);
};
process.once("SIGINT", () => void onSignal());
process.once("SIGTERM", () => void onSignal());
// Mounts must never outlive the check, whatever goes wrong.
process.once("uncaughtException", (err: Error) => {
  process.stderr.write(`${err?.stack ?? String(err)}\n`);
  void killProcessesUnder(WORK)
    .then(() => unmountAll())
    .finally(() => process.exit(1));
});

try {
  await main();
} catch (err) {
  if (!steps.some((s) => !s.ok)) steps.push({ name: "check", ok: false, ms: 0, detail: err instanceof CheckError ? err.message : ((err as Error | undefined)?.stack ?? String(err)) });
} finally {
  await killProcessesUnder(WORK);
  await unmountAll();
}

const leftMounts = await mountsUnder(WORK);
if (leftMounts.length > 0) steps.push({ name: "no mounts left", ok: false, ms: 0, detail: leftMounts.join(", ") });
if (runDir && !keep && !reuse && leftMounts.length === 0) await removeTree(join(WORK, basename(runDir))).catch(() => {});

const ok = steps.length > 0 && steps.every((s) => s.ok);
process.stdout.write(`\n==== check-dockerfile summary (${new Date().toISOString()}) ====\n`);
for (const s of steps) {
  process.stdout.write(`${s.ok ? "PASS" : "FAIL"}  ${seconds(s.ms).padStart(8)}  ${s.name}${s.detail ? `\n                ${String(s.detail).split("\n").join("\n                ")}` : ""}\n`);
}
process.stdout.write(`${ok ? "PASS" : "FAIL"}: ${steps.filter((s) => s.ok).length}/${steps.length} steps, ${seconds(Date.now() - started)} in all${keep || reuse ? `; image kept in ${runDir}` : ""}\n`);
if (!ok && existsSync(BUILD_LOG)) process.stdout.write(`(output of the RUN steps: ${BUILD_LOG})\n`);
process.exit(ok ? 0 : 1);
