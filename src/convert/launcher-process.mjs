// The converters' launcher (src/convert/launcher.ts): a small process that starts the short-lived
// converter programs for the worker and relays what they print. Linux's fork copies the page
// tables of the process that forks, so a spawn from a worker holding hundreds of megabytes cost
// 15-30 ms of processor time and blocked its event loop as long; from this process, which holds
// almost nothing, about a millisecond.
//
// Messages (advanced serialization): in, { t: "run", id, file, args, env }; out, "spawn" (with the
// pid), "data" (fd 1 or 2, the bytes), "error" (the spawn's error), then "close" (code, signal)
// last for each run. Each program is the leader of a process group of its own (the worker kills
// and watches it by that group); when the worker goes, every group still running is killed.
import { spawn } from "node:child_process";

const running = new Map();

function send(message, sent) {
  try {
    return process.send(message, sent);
  } catch {
    // the worker is gone: "disconnect" below ends this process
    return true;
  }
}

// What a program prints goes on only as fast as the worker takes it: while messages wait to be
// sent, its pipe is not read, so a program printing without end is held back by its pipe (as it
// was when the worker read the pipe itself) instead of filling this process's memory.
function relay(stream, id, fd) {
  stream.on("data", (d) => {
    if (!send({ t: "data", id, fd, d }, () => stream.resume())) stream.pause();
  });
}

process.on("message", (m) => {
  if (m?.t !== "run") return;
  const { id } = m;
  let child;
  try {
    child = spawn(m.file, m.args, { stdio: ["ignore", "pipe", "pipe"], env: m.env, detached: true });
  } catch (err) {
    send({ t: "error", id, error: { message: String(err?.message ?? err), code: err?.code } });
    send({ t: "close", id, code: null, signal: null });
    return;
  }
  child.on("spawn", () => {
    running.set(id, child.pid);
    send({ t: "spawn", id, pid: child.pid });
  });
  relay(child.stdout, id, 1);
  relay(child.stderr, id, 2);
  child.on("error", (err) => {
    send({ t: "error", id, error: { message: err.message, code: err.code, errno: err.errno, syscall: err.syscall, path: err.path } });
  });
  child.on("close", (code, signal) => {
    running.delete(id);
    send({ t: "close", id, code, signal });
  });
});

process.on("disconnect", () => {
  for (const pid of running.values()) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // ended meanwhile
    }
  }
  process.exit(0);
});
