/**
 * `npm run bench -- launch`: what starting a converter program costs a worker that holds memory,
 * started directly (Node's spawn, a fork of the worker) against through the launcher process
 * (src/convert/launcher.ts), in the same run. For each, with this process holding 0, 250 and 500 MB:
 * wall time per start-to-exit of `/bin/true`, this process's processor time per start (and the
 * launcher's own, which forks too, from its few megabytes), and the longest the event loop was held
 * (a timer's lateness), the figure every request and job of the process shares.
 */
import { spawn } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { launch, launcherPid } from "../src/convert/launcher.ts";
import { cpuSecondsOf } from "./bench-common.ts";

const RUNS = 60;
const MB = 1024 * 1024;

interface Figures {
  wallMs: number;
  cpuMs: number;
  launcherCpuMs: number;
  maxBlockMs: number;
}

/** The launcher process's processor time in ms (0 before it starts). */
function launcherCpuMs(): number {
  const pid = launcherPid();
  return pid === undefined ? 0 : cpuSecondsOf(pid) * 1000;
}

const direct = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn("/bin/true", [], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    child.on("error", reject);
    child.on("close", () => resolve());
  });

const launched = () =>
  new Promise<void>((resolve, reject) => {
    const program = launch({ file: "/bin/true", args: [], env: { PATH: "/usr/bin:/bin" } });
    program.on("error", reject);
    program.on("close", () => resolve());
  });

async function measure(start: () => Promise<void>): Promise<Figures> {
  for (let i = 0; i < 5; i++) await start();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  const launcher0 = launcherCpuMs();
  const t0 = performance.now();
  for (let i = 0; i < RUNS; i++) await start();
  const wallMs = (performance.now() - t0) / RUNS;
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 / RUNS, launcherCpuMs: (launcherCpuMs() - launcher0) / RUNS, maxBlockMs: delay.max / 1e6 };
}

export async function benchLaunch(): Promise<void> {
  const ballast: Buffer[] = [];
  process.stdout.write(`starting /bin/true ${RUNS} times, one after another (wall ms a start, this process's CPU ms a start, longest event-loop block ms):\n`);
  for (const holding of [0, 250, 500]) {
    // Touched, so the pages are resident as a worker's heap and images are.
    while (ballast.length < holding) ballast.push(Buffer.alloc(MB, 1));
    const a = await measure(direct);
    const b = await measure(launched);
    const f = (x: Figures) => `${x.wallMs.toFixed(2)} ms, ${x.cpuMs.toFixed(2)} CPU ms${x.launcherCpuMs > 0 ? ` (+${x.launcherCpuMs.toFixed(2)} in the launcher)` : ""}, block ${x.maxBlockMs.toFixed(1)} ms`;
    process.stdout.write(
      `  holding ${String(holding).padStart(3)} MB: spawn ${f(a)}; launcher ${f(b)}; ratio launcher / spawn: wall ${(b.wallMs / a.wallMs).toFixed(2)}, ` +
        `CPU ${((b.cpuMs + b.launcherCpuMs) / a.cpuMs).toFixed(2)} (both processes), longest block ${(b.maxBlockMs / a.maxBlockMs).toFixed(2)}\n`,
    );
  }
  ballast.length = 0;
}
