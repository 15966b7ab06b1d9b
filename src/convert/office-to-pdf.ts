import { randomUUID } from "node:crypto";
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import { detectFile } from "../detect/detect-format.ts";
import { ConversionError, stalledFailure } from "./conversion-error.ts";
import { isNoSpaceError } from "../domain/job-failure.ts";
import { OfficeSlot, type SlotResult } from "./office-slot.ts";
import type { SandboxSettings } from "./sandbox.ts";

export interface OfficeConverterOptions {
  /** Parallel LibreOffice processes (default: os.availableParallelism()). */
  slots: number;
  /**
   * Processor time one conversion may use, from the moment a slot takes the job (default 120_000):
   * past it the document is too slow (code 5). Held back by the machine instead (no processor time
   * for the stall window, or 4 × this on the clock: cpu-watch.ts), it fails as "stalled" and is retried.
   */
  timeoutMs: number;
  /** Restart a slot after this many conversions, as soffice's memory grows with use (default 200). */
  restartEvery: number;
  /** Profiles (kept across runs), soffice's temp and each slot's input/output folder live here. */
  workDir: string;
  /** Where soffice runs: the worker's settings (sandbox.ts), always given. */
  sandbox: SandboxSettings;
}

/** An import filter chosen by the caller instead of LibreOffice's type detection. */
export interface ImportFilter {
  /** A filter's UI-independent name, as in LibreOffice's filter list ("Text (encoded)"). */
  name: string;
  /** Its FilterOptions string (for "Text (encoded)": "UTF8,LF,,,"). */
  options?: string;
}

interface Job {
  input: string;
  output: string;
  signal: AbortSignal | undefined;
  importFilter: ImportFilter | undefined;
  resolve: () => void;
  reject: (e: unknown) => void;
  dequeue: () => void;
}

interface SlotState {
  slot: OfficeSlot;
  state: "idle" | "busy" | "restarting" | "broken";
  /** Why the last start failed, for whoever monitors slotInfo(). */
  error?: string;
}

/** Pauses before each attempt to bring a slot back; then it is "broken" and retried every minute. */
const RESTART_BACKOFF_MS = [0, 1000, 5000];
const BROKEN_RETRY_MS = 60_000;

/**
 * Office documents to PDF on warm LibreOffice instances. A document is only ever given to a
 * slot that is idle; the caller's timeout starts then, not while the job waits in the queue
 * (use the AbortSignal for an overall deadline).
 */
export class OfficeConverter {
  private readonly opts: OfficeConverterOptions;
  private readonly slots: SlotState[] = [];
  private readonly queue: Job[] = [];
  private state: "new" | "running" | "closed" = "new";
  /** Each slot's input/output folder, the only data folder its soffice sees; empty between jobs. */
  private readonly ioDir: string;

  constructor(opts: Partial<OfficeConverterOptions> & Pick<OfficeConverterOptions, "workDir" | "sandbox">) {
    this.opts = {
      slots: opts.slots ?? availableParallelism(),
      timeoutMs: opts.timeoutMs ?? 120_000,
      restartEvery: opts.restartEvery ?? 200,
      workDir: resolvePath(opts.workDir),
      sandbox: opts.sandbox,
    };
    const { slots, timeoutMs, restartEvery } = this.opts;
    if (!(Number.isInteger(slots) && slots >= 1 && timeoutMs > 0 && Number.isInteger(restartEvery) && restartEvery >= 1)) {
      throw new RangeError(`invalid OfficeConverter options: ${JSON.stringify({ slots, timeoutMs, restartEvery })}`);
    }
    this.ioDir = join(this.opts.workDir, "io");
  }

  async start(): Promise<void> {
    if (this.state !== "new") throw new Error("OfficeConverter.start() may only be called once");
    await rm(this.ioDir, { recursive: true, force: true });
    await mkdir(this.ioDir, { recursive: true });
    for (let index = 0; index < this.opts.slots; index++) {
      const slot = new OfficeSlot({
        index,
        profileDir: join(this.opts.workDir, "profiles", `slot-${index}`),
        tmpDir: join(this.opts.workDir, "tmp", `slot-${index}`),
        ioDir: join(this.ioDir, `slot-${index}`),
        sandbox: this.opts.sandbox,
      });
      this.slots.push({ slot, state: "restarting" });
    }
    // A slot that fails to start (seen once on a loaded fresh machine: soffice aborting during its
    // first start) is retried with backoff like a crashed one, then every minute: start() refuses
    // only when no slot comes up at all, and the converter serves with the slots that did.
    this.state = "running";
    await Promise.all(this.slots.map((s) => this.restart(s, true)));
    if (this.state !== "running") {
      await Promise.all(this.slots.map((s) => s.slot.stop()));
      throw new Error("OfficeConverter was closed while starting");
    }
    if (this.slots.every((s) => s.state === "broken")) {
      const why = this.slots[0]?.error ?? "unknown";
      await this.close();
      throw new Error(`LibreOffice could not be started: ${why}`);
    }
    this.dispatch();
  }

  async convert(inputPath: string, outputPdfPath: string, signal?: AbortSignal, importFilter?: ImportFilter): Promise<void> {
    const input = resolvePath(inputPath);
    // A missing input is the caller's bug; LibreOffice would report it as an unreadable document.
    if (!(await stat(input).then((s) => s.isFile(), () => false))) {
      throw new ConversionError("internal", "The document's file is missing.", { cause: new Error(`no file at ${input}`) });
    }
    return new Promise<void>((resolve, reject) => {
      if (this.state !== "running") {
        reject(new ConversionError("internal", "The document converter is not running.", { transient: true }));
        return;
      }
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        const at = this.queue.indexOf(job);
        if (at >= 0) {
          this.queue.splice(at, 1);
          reject(signal?.reason);
        }
      };
      const job: Job = {
        input,
        output: resolvePath(outputPdfPath),
        signal,
        importFilter,
        resolve,
        reject,
        dequeue: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** For monitoring and tests: each slot's soffice process group id and conversions since start. */
  slotInfo(): Array<{ index: number; pid: number | undefined; conversions: number; state: string; error?: string }> {
    return this.slots.map((s) => ({ index: s.slot.opts.index, pid: s.slot.pid, conversions: s.slot.conversions, state: s.state, error: s.error }));
  }

  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    for (const job of this.queue.splice(0)) {
      job.dequeue();
      job.reject(new ConversionError("internal", "The document converter was shut down.", { transient: true }));
    }
    await Promise.all(this.slots.map((s) => s.slot.stop()));
    await rm(this.ioDir, { recursive: true, force: true });
    await rm(join(this.opts.workDir, "tmp"), { recursive: true, force: true });
  }

  private dispatch(): void {
    for (const s of this.slots) {
      if (s.state !== "idle") continue;
      const job = this.queue.shift();
      if (!job) return;
      job.dequeue();
      s.state = "busy";
      void this.runJob(s, job);
    }
    if (this.queue.length > 0 && this.slots.every((s) => s.state === "broken")) {
      for (const job of this.queue.splice(0)) {
        job.reject(new ConversionError("internal", "The document converter is unavailable.", { transient: true }));
      }
    }
  }

  private async runJob(s: SlotState, job: Job): Promise<void> {
    const dir = s.slot.opts.ioDir;
    let result: SlotResult | undefined;
    let error: unknown;
    try {
      // A copy, not the caller's path: soffice sees this folder and nothing else of the data
      // folder. The neutral name is what a FILENAME field would print.
      await copyFile(job.input, join(dir, "document"));
      result = await s.slot.run(join(dir, "document"), join(dir, "out.pdf"), this.opts.timeoutMs, job.signal, job.importFilter);
      s.slot.conversions++;
      // Kill before answering: the caller may rely on the old soffice being gone.
      if (!result.ok && result.kind !== "encrypted" && result.kind !== "corrupt") await s.slot.stop();
      if (result.ok) {
        await assertPdf(join(dir, "out.pdf"));
        await publish(join(dir, "out.pdf"), job.output);
      } else {
        error = await this.failure(result, job);
      }
    } catch (e) {
      error = e instanceof ConversionError ? e : new ConversionError("internal", "The document could not be converted.", { transient: true, cause: e });
    }
    // Clean before answering, so that the slot's folder is empty whenever no job runs.
    await emptyFolder(dir);
    if (error === undefined) job.resolve();
    else job.reject(error);

    if (this.state !== "running") return;
    // A copy that found no room on the disk never reached soffice: nothing to restart (a restart on
    // a full disk could leave the slot broken for a minute after the space is back).
    const healthy = result === undefined ? isNoSpaceError(error) : result.ok || result.kind === "encrypted" || result.kind === "corrupt";
    if (healthy && s.slot.conversions < this.opts.restartEvery) s.state = "idle";
    else await this.restart(s);
    this.dispatch();
  }

  private async failure(result: Extract<SlotResult, { ok: false }>, job: Job): Promise<unknown> {
    const cause = new Error(result.message);
    switch (result.kind) {
      case "encrypted":
        return new ConversionError("encrypted", "The document is password-protected.", { cause });
      case "corrupt":
        // LibreOffice calls an encrypted OOXML package (an OLE file with EncryptedPackage) unreadable.
        if ((await isEncryptedPowerPoint(job.input)) || (await detectFile(job.input))?.encrypted) {
          return new ConversionError("encrypted", "The document is password-protected.", { cause });
        }
        return new ConversionError("corrupt", "The document could not be read; it may be damaged.", { cause });
      case "timeout":
        return new ConversionError("limits", "The document took too long to convert.", { cause });
      case "stalled":
        return stalledFailure("LibreOffice", result.why, result.usage);
      case "aborted":
        return job.signal?.reason ?? new Error("aborted");
      case "crash":
        if (this.state === "closed") {
          return new ConversionError("internal", "The document converter was shut down.", { transient: true, cause });
        }
        return new ConversionError("internal", "The converter stopped while converting the document.", { transient: true, cause });
    }
  }

  /** `starting`: start() awaits this, so its pauses must keep the process alive. */
  private async restart(s: SlotState, starting = false): Promise<void> {
    s.state = "restarting";
    for (const wait of RESTART_BACKOFF_MS) {
      if (wait) {
        await new Promise((r) => {
          const timer = setTimeout(r, wait);
          if (!starting) timer.unref();
        });
      }
      if (this.state !== "running") return;
      await s.slot.stop();
      try {
        await s.slot.start();
        if (this.state !== "running") {
          await s.slot.stop(); // close() ran meanwhile and did not see this new process
          return;
        }
        s.state = "idle";
        s.error = undefined;
        return;
      } catch (e) {
        s.error = e instanceof Error ? e.message : String(e);
      }
    }
    s.state = "broken";
    setTimeout(() => {
      if (this.state === "running" && s.state === "broken") void this.restart(s).then(() => this.dispatch());
    }, BROKEN_RETRY_MS).unref();
  }
}

async function emptyFolder(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.map((n) => rm(join(dir, n), { recursive: true, force: true })));
}

async function assertPdf(path: string): Promise<void> {
  const size = await stat(path).then((s) => s.size, () => 0);
  const head = Buffer.alloc(5);
  if (size > 0) {
    const fh = await open(path, "r");
    try {
      await fh.read(head, 0, 5, 0);
    } finally {
      await fh.close();
    }
  }
  if (size === 0 || head.toString("latin1") !== "%PDF-") {
    throw new ConversionError("corrupt", "The document could not be converted.", {
      cause: new Error(size === 0 ? "LibreOffice wrote no PDF" : "LibreOffice's output is not a PDF"),
    });
  }
}

/** Atomic for readers of `dest`: it is either absent/old or the complete new PDF. */
async function publish(src: string, dest: string): Promise<void> {
  try {
    await rename(src, dest);
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e;
  }
  const tmp = `${dest}.${randomUUID()}.tmp`;
  try {
    await copyFile(src, tmp);
    await rename(tmp, dest);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * LibreOffice cannot open encrypted PowerPoint 97-2003 files and, unlike Word's, does not ask
 * for a password: the load simply fails. MS-PPT marks them in the CurrentUser stream: the
 * CurrentUserAtom (record type 0x0FF6, size 0x14) carries headerToken 0xF3D1C4DF instead of
 * 0xE391C05F. Only consulted after a failed load, so a false match cannot hide a good file.
 */
async function isEncryptedPowerPoint(path: string): Promise<boolean> {
  const size = await stat(path).then((s) => s.size, () => 0);
  if (size < 512 || size > 256 * 1024 * 1024) return false;
  const data = await readFile(path);
  if (data.readUInt32BE(0) !== 0xd0cf11e0) return false; // not an OLE compound file
  const token = Buffer.from([0x14, 0x00, 0x00, 0x00, 0xdf, 0xc4, 0xd1, 0xf3]);
  for (let at = data.indexOf(token); at !== -1; at = data.indexOf(token, at + 1)) {
    if (at >= 6 && data.readUInt16LE(at - 6) === 0x0ff6) return true;
  }
  return false;
}
