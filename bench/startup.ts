/**
 * `npm run bench -- startup`: start-up time and memory of `quire --help`, `quire accounts list`,
 * `quire worker` and `quire serve --no-worker`, run from the sources through tsx (how every process started before the
 * compiled build) and from the compiled build, alternately, in the same run.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RUNS = 5;

interface Sample {
  ms: number;
  rssMb: number;
}

/** Starts one process and waits for `ready` on its output (or its exit); RSS is read at that moment. */
function startOnce(argv: string[], ready: RegExp | "exit", env: NodeJS.ProcessEnv): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let peakKb = 0;
    // --help is over before a sample could be taken at "ready": its peak is read as it exits.
    const poll = setInterval(() => (peakKb = Math.max(peakKb, rssKb(child.pid!, "VmHWM"))), 5);
    const done = (sample: Sample) => {
      clearInterval(poll);
      resolve(sample);
    };
    const onData = (c: Buffer) => {
      out += c.toString();
      if (ready !== "exit" && ready.test(out)) {
        const sample = { ms: performance.now() - started, rssMb: rssKb(child.pid!, "VmRSS") / 1024 };
        child.once("exit", () => done(sample));
        child.kill("SIGTERM");
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      if (ready === "exit") done({ ms: performance.now() - started, rssMb: peakKb / 1024 });
      else if (!ready.test(out)) reject(new Error(`${argv.join(" ")} exited ${code} before ${ready}:\n${out}`));
    });
  });
}

function rssKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchStartup(): Promise<void> {
  await mkdir(join(ROOT, ".tmp"), { recursive: true });
  const dist = await mkdtemp(join(ROOT, ".tmp", "dist-bench-"));
  const data = await mkdtemp(join(tmpdir(), "quire-bench-startup-"));
  try {
    const built = spawnSync(process.execPath, ["scripts/build.mjs", "--out-dir", dist], { cwd: ROOT, encoding: "utf8" });
    if (built.status !== 0) throw new Error(`build failed:\n${built.stdout}${built.stderr}`);
    const env = { ...process.env, QUIRE_DATA_DIR: data, QUIRE_PORT: "0", QUIRE_LOG_LEVEL: "info", QUIRE_DEMO_ACCOUNT: "0", QUIRE_OFFICE_SLOTS: "1" };
    const commands: Array<{ label: string; args: string[]; ready: RegExp | "exit" }> = [
      { label: "quire --help", args: ["--help"], ready: "exit" },
      { label: "quire accounts list", args: ["accounts", "list"], ready: "exit" },
      { label: "quire worker", args: ["worker"], ready: /"msg":"worker started"/ },
      { label: "quire serve --no-worker", args: ["serve", "--no-worker"], ready: /Quire listening on/ },
    ];
    const sides = {
      "sources (tsx)": ["--import", "tsx", join(ROOT, "src/cli/main.ts")],
      compiled: [join(dist, "cli/main.js")],
    };
    process.stdout.write(`start-up to ready and resident memory at ready (median of ${RUNS}, sides alternating)\n\n`);
    process.stdout.write(`| command | sources (tsx) | compiled | time ratio | memory ratio |\n|---|---|---|---|---|\n`);
    for (const c of commands) {
      const samples: Record<string, Sample[]> = { "sources (tsx)": [], compiled: [] };
      for (let i = 0; i < RUNS; i++) {
        for (const [side, prefix] of Object.entries(sides)) samples[side]!.push(await startOnce([...prefix, ...c.args], c.ready, env));
      }
      const fmt = (s: Sample[]) => `${median(s.map((x) => x.ms)).toFixed(0)} ms, ${median(s.map((x) => x.rssMb)).toFixed(0)} MB`;
      const [before, after] = [samples["sources (tsx)"]!, samples.compiled!];
      const timeRatio = median(after.map((x) => x.ms)) / median(before.map((x) => x.ms));
      const memRatio = median(after.map((x) => x.rssMb)) / median(before.map((x) => x.rssMb));
      process.stdout.write(`| ${c.label} | ${fmt(before)} | ${fmt(after)} | ×${timeRatio.toFixed(2)} | ×${memRatio.toFixed(2)} |\n`);
    }
    process.stdout.write(`\nquire worker is ready once its LibreOffice slot has started, which dominates its time either way.\n`);
  } finally {
    await rm(dist, { recursive: true, force: true });
    await rm(data, { recursive: true, force: true });
  }
}
