import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { watchCpu, type CpuUsage } from "./cpu-watch.ts";
import { prepareProfile } from "./office-profile.ts";
import { sandboxView, SANDBOX_UID, type SandboxSettings, type SandboxView } from "./sandbox.ts";

export const SOFFICE = "/usr/bin/soffice";
/** Debian's interpreter has the `uno` module; a pyenv or venv `python3` on PATH usually lacks it. */
export const UNO_PYTHON = "/usr/bin/python3";
const HELPER = fileURLToPath(new URL("./uno-convert.py", import.meta.url));
/** Covers a first start on a fresh profile (about 2 s here) with a wide margin for a loaded host. */
const START_TIMEOUT_MS = 60_000;
/** soffice converting our fixtures peaks near 1.2 GB of address space (the 100-slide ODP included). */
export const OFFICE_ADDRESS_SPACE_BYTES = 3 * 1024 ** 3;
const STDERR_TAIL = 4096;

export type SlotResult =
  | { ok: true; filter: string }
  | { ok: false; kind: "encrypted" | "corrupt" | "crash" | "timeout" | "aborted"; message: string }
  /** Held back by the machine (cpu-watch.ts): stopped from outside, or starved. */
  | { ok: false; kind: "stalled"; why: "stalled" | "starved"; usage: CpuUsage; message: string };

interface Reply {
  id?: number;
  ready?: boolean;
  ok?: boolean;
  kind?: string;
  message?: string;
  filter?: string;
}

export interface SlotOptions {
  index: number;
  profileDir: string;
  /** soffice's /tmp (its TMPDIR, the UNO pipe's socket, the warm-up scratch); emptied on every start. */
  tmpDir: string;
  /** The only data folder soffice sees (as /io): each conversion's input and output go there. */
  ioDir: string;
  sandbox: SandboxSettings;
}

/**
 * One warm soffice (own profile, own process group, own sandbox: see sandbox.ts) plus its
 * resident uno-convert.py in a sandbox of its own that shares only soffice's /tmp, where the
 * UNO pipe's socket is. Runs one conversion at a time; the owner decides when to restart it.
 * A slot never retries anything itself.
 */
export class OfficeSlot {
  conversions = 0;
  private office: ChildProcess | undefined;
  private helper: ChildProcess | undefined;
  private pipeName = "";
  private profileUrl = "";
  private view: SandboxView | undefined;
  private stderr = "";
  private nextId = 1;
  private readonly replies = new Map<number, (r: Reply) => void>();
  private readonly onDeath = new Set<(why: string) => void>();
  private deathReason: string | undefined;
  private generation = 0;

  constructor(readonly opts: SlotOptions) {}

  /** soffice's process group id (the pid of the process we spawned), while running. */
  get pid(): number | undefined {
    return this.office?.pid;
  }

  async start(): Promise<void> {
    this.conversions = 0;
    this.generation++;
    this.deathReason = undefined;
    this.stderr = "";
    const { profileDir, tmpDir, ioDir, sandbox } = this.opts;
    await prepareProfile(profileDir);
    await rm(tmpDir, { recursive: true, force: true });
    await mkdir(tmpDir, { recursive: true });
    await mkdir(ioDir, { recursive: true });
    // A hostile document must not take the machine's memory: past this address space soffice's
    // allocations fail and it dies, which the slot reports and recovers from.
    const view = sandboxView(
      { writable: [[profileDir, "/profile"], [ioDir, "/io"]], tmp: tmpDir, env: { SAL_USE_VCLPLUGIN: "svp" }, addressSpaceBytes: OFFICE_ADDRESS_SPACE_BYTES },
      sandbox,
    );
    this.view = view;
    // As soffice sees it: file:///profile in the sandbox, the real folder without one.
    const profileUrl = pathToFileURL(view.path(profileDir)).href;
    this.profileUrl = profileUrl;
    // The name becomes the Unix socket OSL_PIPE_<uid>_<name> in soffice's /tmp: a filesystem
    // socket, so it is reachable from the helper's sandbox, which has the same folder as /tmp.
    this.pipeName = `quire-${process.pid}-${this.opts.index}-${randomBytes(6).toString("hex")}`;
    const args = [
      `-env:UserInstallation=${profileUrl}`,
      "--headless", "--invisible", "--nologo", "--norestore", "--nodefault", "--nolockcheck",
      `--accept=pipe,name=${this.pipeName};urp;`,
    ];
    const officeCmd = view.command(SOFFICE, args);
    const office = spawn(officeCmd.file, officeCmd.args, {
      detached: true, // own process group: a timeout kills the whole sandbox together
      stdio: ["ignore", "pipe", "pipe"],
      env: officeCmd.env,
    });
    this.office = office;
    this.watch(office, "soffice");
    const helperView = sandboxView(
      { readOnly: [[HELPER, "/opt/quire/uno-convert.py"]], tmp: tmpDir, env: { PYTHONDONTWRITEBYTECODE: "1" }, addressSpaceBytes: OFFICE_ADDRESS_SPACE_BYTES },
      sandbox,
    );
    // Sandboxed, the helper cannot see soffice's processes (nor needs to: both sandboxes die with
    // us); unsandboxed, it kills soffice's group if we die without stopping it.
    const officeGroup = sandbox.kind === "none" ? String(office.pid ?? 0) : "0";
    const helperArgs = [helperView.path(HELPER), this.pipeName, String(START_TIMEOUT_MS / 1000), helperView.path(tmpDir), officeGroup];
    const helperCmd = helperView.command(UNO_PYTHON, helperArgs);
    const helper = spawn(helperCmd.file, helperCmd.args, { detached: true, stdio: ["pipe", "pipe", "pipe"], env: helperCmd.env });
    this.helper = helper;
    this.watch(helper, "uno-convert.py");
    helper.stdin?.on("error", () => {}); // EPIPE after a crash surfaces through the exit instead

    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`LibreOffice slot ${this.opts.index} did not start in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      const died = (why: string): void => {
        clearTimeout(timer);
        reject(new Error(`LibreOffice slot ${this.opts.index} failed to start: ${why}\n${this.stderr}`));
      };
      this.onDeath.add(died);
      createInterface({ input: helper.stdout! }).on("line", (line) => {
        const reply = parse(line);
        if (reply?.ready) {
          clearTimeout(timer);
          this.onDeath.delete(died);
          resolve();
        } else if (reply?.id !== undefined) {
          this.replies.get(reply.id)?.(reply);
        }
      });
    });
    try {
      await ready;
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  /**
   * `input` and `output` are in the slot's ioDir, the only data folder soffice can see;
   * `importFilter` ({ name, options }) replaces LibreOffice's type detection.
   * `timeoutMs` is processor time, of soffice's and the helper's processes together (cpu-watch.ts):
   * past it, "timeout"; a conversion held back by the machine (no processor time for the stall
   * window, or WALL_ALLOWANCE × the limit on the clock) is "stalled". The owner kills the slot then.
   */
  run(input: string, output: string, timeoutMs: number, signal?: AbortSignal, importFilter?: { name: string; options?: string }): Promise<SlotResult> {
    const helper = this.helper;
    const view = this.view;
    if (!helper?.stdin || !view || this.deathReason !== undefined) {
      return Promise.resolve({ ok: false, kind: "crash", message: this.deathReason ?? "slot not running" });
    }
    input = view.path(input);
    output = view.path(output);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const finish = (r: SlotResult): void => {
        watch.stop();
        signal?.removeEventListener("abort", onAbort);
        this.onDeath.delete(onDied);
        this.replies.delete(id);
        resolve(r);
      };
      const onAbort = (): void => finish({ ok: false, kind: "aborted", message: "aborted by the caller" });
      const onDied = (why: string): void => finish({ ok: false, kind: "crash", message: `${why}\n${this.stderr}` });
      // Both process groups: soffice does the work, the helper drives it through UNO.
      const groups = [this.office?.pid, helper.pid].filter((p): p is number => p !== undefined);
      const watch = watchCpu(() => groups, { limitMs: timeoutMs }, (verdict, usage) => {
        const spent = `${usage.cpuMs} ms of processor time in ${usage.wallMs} ms`;
        if (verdict === "too-slow") finish({ ok: false, kind: "timeout", message: `no result after ${spent}` });
        else finish({ ok: false, kind: "stalled", why: verdict, usage, message: `${verdict}: ${spent}` });
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.onDeath.add(onDied);
      this.replies.set(id, (reply) => finish(toResult(reply)));
      helper.stdin!.write(`${JSON.stringify({ id, input, output, importFilter })}\n`);
    });
  }

  /** Kills both processes and waits until they are gone. Safe to call at any time. */
  async stop(): Promise<void> {
    const { office, helper, pipeName, profileUrl } = this;
    this.office = undefined;
    this.helper = undefined;
    this.died("stopped");
    await Promise.all([killGroup(office), killGroup(helper)]);
    // soffice removes its sockets only on a clean exit; a killed one leaves them in its /tmp.
    const prefix = this.opts.sandbox.kind === "none" ? `/tmp/OSL_PIPE_${process.getuid?.() ?? 0}_` : `${this.opts.tmpDir}/OSL_PIPE_${SANDBOX_UID}_`;
    if (pipeName) await rm(prefix + pipeName, { force: true });
    if (profileUrl) await rm(prefix + singleInstancePipe(profileUrl), { force: true });
  }

  private died(why: string): void {
    this.deathReason ??= why;
    for (const f of [...this.onDeath]) f(why);
  }

  private watch(child: ChildProcess, name: string): void {
    const keep = (chunk: Buffer): void => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    };
    if (name === "soffice") child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const generation = this.generation;
    const died = (why: string): void => {
      if (generation === this.generation) this.died(why);
    };
    child.on("error", (e) => died(`${name} could not run: ${e.message}`));
    child.on("exit", (code, sig) => died(`${name} exited (${sig ?? `code ${code}`})`));
  }
}

/**
 * The socket soffice opens so that a second `soffice` with the same profile hands its work over
 * (desktop/source/app/officeipcthread.cxx): MD5 of the UTF-16 profile URL, bytes in unpadded hex.
 */
function singleInstancePipe(profileUrl: string): string {
  const digest = createHash("md5").update(Buffer.from(profileUrl, "utf16le")).digest();
  return `SingleOfficeIPC_${[...digest].map((b) => b.toString(16)).join("")}`;
}

function parse(line: string): Reply | undefined {
  try {
    return JSON.parse(line) as Reply;
  } catch {
    return undefined;
  }
}

function toResult(r: Reply): SlotResult {
  if (r.ok) return { ok: true, filter: r.filter ?? "" };
  const kind = r.kind === "encrypted" || r.kind === "corrupt" ? r.kind : "crash";
  return { ok: false, kind, message: r.message ?? "" };
}

/** Pids whose process group is `pgid` (Linux /proc; the leader included). */
export function processGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the parenthesised command: state ppid pgrp ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z") members.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return members;
}

/**
 * SIGKILLs a whole process group and waits for its leader. Members other than the leader go
 * first, so that oosplash can reap soffice.bin: killed together, soffice.bin would be left to
 * PID 1, which in a container without an init never reaps it.
 */
async function killGroup(child: ChildProcess | undefined): Promise<void> {
  const pgid = child?.pid;
  if (!child || pgid === undefined) return;
  const exited = child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (const pid of processGroupMembers(pgid)) if (pid !== pgid) signal(pid, "SIGKILL");
  await Promise.race([exited, delay(1000)]);
  signal(-pgid, "SIGKILL");
  await Promise.race([exited, delay(5000)]);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
