import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { once } from "node:events";
import { describe, test } from "node:test";
import { launch, launcherPid, type LaunchedProgram } from "../../src/convert/launcher.ts";
import { isAlive } from "../helpers/live-process.ts";
import { PROJECT_ROOT, tsEntryArgs } from "../helpers/paths.ts";
import { until } from "../helpers/poll.ts";

const ENV = { PATH: "/usr/bin:/bin" };

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: NodeJS.ErrnoException;
}

function ran(program: LaunchedProgram): Promise<Ran> {
  const out: Buffer[] = [];
  let stderr = "";
  let error: NodeJS.ErrnoException | undefined;
  program.stdout.onBytes((b) => out.push(b));
  program.stderr.onText((t) => (stderr += t));
  program.on("error", (e) => (error = e));
  return new Promise((resolve) =>
    program.on("close", (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr, ...(error ? { error } : {}) })),
  );
}

describe("the converters' launcher", () => {
  test("a program's stdout (bytes, whole), stderr (text) and exit code come back, with its pid, in a process group of its own", async () => {
    // 200 KiB of output in many chunks, and a character split across them. The program says its
    // own process group (field 5 of its stat): read from here at "spawn", the program could have
    // printed everything into the launcher's socket, ended and been reaped before this process
    // got the message, and its /proc entry was gone (a full run failed so).
    const program = launch({
      file: "/bin/sh",
      args: ["-c", "cut -d' ' -f5 /proc/$$/stat >&2; head -c 204800 /dev/zero | tr '\\0' x; printf 'é' >&2; exit 3"],
      env: ENV,
    });
    const r = await ran(program);
    assert.equal(r.code, 3);
    assert.equal(r.stdout, "x".repeat(204800));
    assert.equal(r.stderr, `${program.pid}\né`, "its stderr whole, and the program leads its own process group");
    assert.notEqual(launcherPid(), process.pid);
  });

  test("a program that does not exist fails to start with the spawn's error, then closes", async () => {
    const r = await ran(launch({ file: "/nonexistent/program", args: [], env: ENV }));
    assert.equal(r.error?.code, "ENOENT");
    assert.equal(r.code, -2);
  });

  test("the caller kills the whole group by the pid it got", async () => {
    const program = launch({ file: "/bin/sh", args: ["-c", "sleep 60 & echo $!; wait"], env: ENV });
    const closed = once(program, "close");
    await once(program, "spawn");
    const sleeper = await new Promise<number>((resolve) => program.stdout.onText((t) => resolve(Number(t.trim()))));
    process.kill(-program.pid!, "SIGKILL");
    assert.deepEqual(await closed, [null, "SIGKILL"]);
    await until(() => !isAlive(sleeper), 5000, "the program's own child to end with its group");
  });

  test("a program that prints without end while this process is busy is held back by its pipe: the launcher's memory stays flat", async () => {
    const program = launch({ file: "/bin/cat", args: ["/dev/zero"], env: ENV });
    let bytes = 0;
    program.stdout.onBytes((b) => (bytes += b.length));
    const closed = once(program, "close");
    await once(program, "spawn");
    const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${launcherPid()}/status`, "utf8"))![1]) * 1024;
    const before = rss();
    // A second in which this process reads nothing (a worker busy with a page): the launcher keeps
    // what it was sent no longer than its channel's queue allows.
    const end = Date.now() + 1000;
    while (Date.now() < end) {
      // busy
    }
    const during = rss();
    process.kill(-program.pid!, "SIGKILL");
    await closed;
    assert.ok(bytes > 0, "the output came through");
    assert.ok(during - before < 32 * 1024 * 1024, `the launcher grew by ${Math.round((during - before) / 1024 / 1024)} MB`);
  });

  test("a launcher that dies takes its programs with it, they close as killed, and the next program gets a new launcher", async () => {
    const program = launch({ file: "/bin/sleep", args: ["60"], env: ENV });
    const result = ran(program);
    await once(program, "spawn");
    const first = launcherPid()!;
    process.kill(first, "SIGKILL");
    const r = await result;
    assert.deepEqual([r.code, r.signal], [null, "SIGKILL"]);
    await until(() => !isAlive(program.pid!), 5000, "the program to be killed with its launcher");
    const next = await ran(launch({ file: "/bin/echo", args: ["again"], env: ENV }));
    assert.equal(next.stdout, "again\n");
    assert.notEqual(launcherPid(), first);
  });

  test("when the process that launched a program is killed, the launcher kills the program and ends", async () => {
    const child = spawn(process.execPath, tsEntryArgs("test/helpers/launcher-child.ts"), { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "inherit"] });
    const [sleeper, launcher] = await new Promise<number[]>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => resolve(d.toString().trim().split(" ").map(Number)));
      child.once("exit", () => reject(new Error("the child ended before it launched")));
    });
    assert.ok(isAlive(sleeper!) && isAlive(launcher!));
    child.kill("SIGKILL");
    await until(() => !isAlive(sleeper!), 5000, "the program to end with the process that launched it");
    await until(() => !isAlive(launcher!), 5000, "the launcher to end with that process");
  });
});
