/**
 * Time limits of converters judged by the converter's own processor time (issue 23 item 0e,
 * issue 27 item 5). A wall-clock limit cannot tell a slow document from a busy machine or a
 * converter stopped from outside (SIGSTOP): all three only take long. The processor time the
 * converter's processes used can: a document is too slow only when its converter used the whole
 * limit on the processor; one that used little while the clock ran was held back by the machine.
 *
 * A watch samples the processor time (user + system, of live processes and of the children they
 * reaped) of every process in the converter's process groups, from Linux's /proc/<pid>/stat,
 * once a second (every process group of every watch in one pass over /proc) and says:
 * - `too-slow` once the converter used `limitMs` of processor time: the document's fault (code 5);
 * - `stalled` once it used none for `stallMs` (stopped by a signal, or starved outright): killed at
 *   once rather than holding its worker for the whole limit, and retried;
 * - once `limitMs × WALL_ALLOWANCE` of wall time passed without the processor limit being reached:
 *   `too-slow` if it used at least half its limit (slow on its own as well), else `starved`: the
 *   machine was too busy to tell, so the job is retried.
 * Where /proc cannot be read, the processor time is taken to be the wall time (the old rule).
 */
import { readdirSync, readFileSync } from "node:fs";

/** Wall time a converter may take, as a multiple of its processor-time limit, while it keeps progressing. */
export const WALL_ALLOWANCE = 4;
/** Less processor time than this over the stall window is no progress (a clock tick is 10 ms). */
const MIN_PROGRESS_MS = 20;
/** The shortest stall window. */
const MIN_STALL_MS = 1000;
/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times, on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export type CpuVerdict = "too-slow" | "stalled" | "starved";

export interface CpuUsage {
  cpuMs: number;
  wallMs: number;
}

export interface CpuWatchLimits {
  /** Processor time the converter may use. */
  limitMs: number;
  /** No processor time used for this long: stalled (default: the configured window, at most `limitMs`). */
  stallMs?: number;
}

export interface CpuWatch {
  /** Starts the limits' count again (a converter reporting steady progress: the limit is per step). */
  restart(): void;
  usage(): CpuUsage;
  stop(): void;
}

let defaultStallMs = 30_000;

/** Set once by the worker from QUIRE_CONVERTER_STALL_SECONDS; every later watch uses it. Answers the window it replaces. */
export function configureStallWindow(ms: number): number {
  const was = defaultStallMs;
  defaultStallMs = ms;
  return was;
}

interface Watch {
  groups: () => readonly number[];
  /** How often it wants a sample. */
  everyMs: number;
  sample(cpuByGroup: ReadonlyMap<number, number> | undefined, now: number): void;
}

const watches = new Set<Watch>();
let timer: { handle: NodeJS.Timeout; everyMs: number } | undefined;

/**
 * Processor time (ms) per process group among `wanted`: user and system time of each live process
 * (zombies included: their time is final) plus that of the children it reaped. Undefined when
 * /proc cannot be read.
 */
export function cpuByProcessGroup(wanted: ReadonlySet<number>): Map<number, number> | undefined {
  // A watch starts before its converter is spawned (no group yet): a pass over /proc reads the
  // stat file of every process on the machine, about 40 µs each, for a sum that is 0.
  if (wanted.size === 0) return new Map();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const sums = new Map<number, number>();
  for (const entry of entries) {
    if (entry.charCodeAt(0) > 57 || entry.charCodeAt(0) < 48) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "latin1");
    } catch {
      continue; // ended while we looked
    }
    // After the parenthesised command: state ppid pgrp session tty tpgid flags minflt cminflt
    // majflt cmajflt utime stime cutime cstime ...
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pgrp = Number(f[2]);
    if (!wanted.has(pgrp)) continue;
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    if (Number.isFinite(ticks)) sums.set(pgrp, (sums.get(pgrp) ?? 0) + (ticks * 1000) / TICKS_PER_SECOND);
  }
  return sums;
}

function tick(): void {
  const wanted = new Set<number>();
  for (const w of watches) for (const g of w.groups()) wanted.add(g);
  const cpu = cpuByProcessGroup(wanted);
  const now = performance.now();
  for (const w of [...watches]) w.sample(cpu, now);
}

/** One timer for every watch, at the shortest interval any of them wants; none while none watches. */
function schedule(): void {
  const everyMs = Math.min(...[...watches].map((w) => w.everyMs));
  if (timer?.everyMs === everyMs) return;
  if (timer) clearInterval(timer.handle);
  timer = undefined;
  if (watches.size === 0) return;
  const handle = setInterval(() => {
    tick();
    schedule();
  }, everyMs);
  handle.unref();
  timer = { handle, everyMs };
}

/**
 * Watches the converter whose processes are in the process groups `groups()` names (looked up at
 * each sample: a group may start later, or be replaced) and calls `onVerdict` once, when it is
 * too slow, stalled or starved; the caller kills it then. Stop the watch when the run ends.
 */
export function watchCpu(groups: () => readonly number[], limits: CpuWatchLimits, onVerdict: (verdict: CpuVerdict, usage: CpuUsage) => void): CpuWatch {
  // Never under a second: processor time is counted in 10 ms ticks, and a program starting up may
  // wait on the disk for a moment.
  const stallMs = Math.max(MIN_STALL_MS, Math.min(limits.stallMs ?? defaultStallMs, limits.limitMs));
  const wallCapMs = limits.limitMs * WALL_ALLOWANCE;
  /** Highest processor time seen (a process that ends and is reaped by us leaves the sum). */
  let cpuSeen = 0;
  let startedAt = performance.now();
  let decided = false;

  // The baseline is taken now (a warm LibreOffice has used processor time before this conversion).
  const first = cpuByProcessGroup(new Set(groups()));
  let base = { cpu: 0 };
  let progress = { at: startedAt, cpu: 0 };
  const current = (cpuByGroup: ReadonlyMap<number, number> | undefined, now: number): number => {
    if (cpuByGroup === undefined) return now - startedAt; // no /proc: the wall clock decides, as before
    let cpu = 0;
    for (const g of groups()) cpu += cpuByGroup.get(g) ?? 0;
    cpuSeen = Math.max(cpuSeen, cpu);
    return cpuSeen;
  };

  if (first !== undefined) base = { cpu: current(first, startedAt) };
  progress = { at: startedAt, cpu: base.cpu };

  let sampledAt = startedAt;
  const watch: Watch = {
    groups,
    // Often enough to see a stall within a quarter of its window.
    everyMs: Math.max(100, Math.min(1000, Math.floor(stallMs / 4))),
    sample(cpuByGroup, now) {
      if (decided) return;
      // A sample this late means this process was held back (its event loop busy, or the machine):
      // progress the converter reported meanwhile waits behind this sample, unread. That time is not
      // counted towards a stall.
      const late = now - sampledAt - 2 * watch.everyMs;
      sampledAt = now;
      if (late > 0) progress = { at: progress.at + late, cpu: progress.cpu };
      const cpu = current(cpuByGroup, now);
      const used = cpuByGroup === undefined ? cpu : cpu - base.cpu;
      const wall = now - startedAt;
      if (cpu - progress.cpu >= MIN_PROGRESS_MS) progress = { at: now, cpu };
      let verdict: CpuVerdict | undefined;
      if (used >= limits.limitMs) verdict = "too-slow";
      else if (now - progress.at >= stallMs) verdict = "stalled";
      // Out of wall time: one that used half its limit on the processor is slow on its own too.
      else if (wall >= wallCapMs) verdict = used >= limits.limitMs / 2 ? "too-slow" : "starved";
      if (verdict === undefined) return;
      decided = true;
      watches.delete(watch);
      schedule();
      onVerdict(verdict, { cpuMs: Math.round(used), wallMs: Math.round(wall) });
    },
  };
  watches.add(watch);
  schedule();

  return {
    restart() {
      if (decided) return;
      startedAt = performance.now();
      base = { cpu: cpuSeen };
      progress = { at: startedAt, cpu: cpuSeen };
    },
    usage() {
      return { cpuMs: Math.round(cpuSeen - base.cpu), wallMs: Math.round(performance.now() - startedAt) };
    },
    stop() {
      decided = true;
      watches.delete(watch);
      schedule();
    },
  };
}
