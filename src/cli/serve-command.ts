import { spawn, type ChildProcess } from "node:child_process";
import { startApiRole } from "../api-role.ts";
import type { Config } from "../config.ts";
import { openServices } from "../services.ts";
import { createAccount } from "../accounts/account-admin.ts";

/** `quire serve` / `npm start`: the API and, unless --no-worker, a supervised worker process. */
export async function serveCommand(config: Readonly<Config>, opts: { worker: boolean }): Promise<void> {
  // Installed before anything starts: a signal arriving between two steps of the start (while the
  // worker is being spawned, say) must still stop what was started, not kill us and orphan it.
  const shutdown: { requested: boolean; run?: () => Promise<void> } = { requested: false };
  let waitingForDatabase = false;
  const onSignal = () => {
    // Nothing is started while the database is waited for: there is nothing to stop but us.
    if (waitingForDatabase) process.exit(0);
    shutdown.requested = true;
    if (shutdown.run) void shutdown.run();
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  const services = await openServices(config, {
    onUnavailable: (err, attempt) => {
      waitingForDatabase = true;
      process.stderr.write(`quire: the database cannot be reached yet (${String((err as Error)?.message ?? err)}); trying again (attempt ${attempt})\n`);
    },
  });
  waitingForDatabase = false;
  const { store } = services;
  if (config.createDemoAccount && (await store.accounts.count()) === 0) {
    const demo = await createAccount(store, "demo");
    process.stdout.write(
      "\nA first account was created so you can try the API at once (shown only this time):\n" +
        `  username:  ${demo.username}\n  apiKey:    ${demo.apiKey}\n  apiSecret: ${demo.apiSecret}\n\n`,
    );
  }
  // Started once the ports are ours: a server that cannot listen must not leave a worker behind.
  let worker: ReturnType<typeof superviseWorker> | undefined;
  const api = await startApiRole({
    config,
    services,
    ...(opts.worker ? { checks: { converter: async () => (worker ? worker.assertRunning() : Promise.reject(new Error("the worker is not started yet"))) } } : {}),
  });
  process.stdout.write(`Quire listening on ${api.address} (API at ${api.address}/1_0, uploads at ${api.address}/upload/1_0)\n`);
  if (opts.worker && !shutdown.requested) worker = superviseWorker();
  shutdown.run = async () => {
    // New requests get 503 at once; those in flight (a long upload) get a grace period, then their
    // connections are cut; meanwhile the worker hands back or finishes its jobs.
    await Promise.all([worker?.stop(), api.close(API_STOP_GRACE_MS)]);
    await services.close();
    process.exit(0);
  };
  if (shutdown.requested) await shutdown.run();
}

/** How long requests in flight at SIGTERM may still run. */
const API_STOP_GRACE_MS = 30_000;

/** Longer than the worker's own stop grace (30 s), so a healthy worker is never killed. */
const WORKER_STOP_DEADLINE_MS = 45_000;

/**
 * The worker runs as a child process (`quire worker`), so conversions never share the HTTP event
 * loop; it is started again if it dies, and stopped with the server.
 */
function superviseWorker(): { stop(): Promise<void>; assertRunning(): void } {
  let child: ChildProcess | undefined;
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;
  let delayMs = 1000;
  const start = () => {
    if (stopping) return;
    const startedAt = Date.now();
    // The IPC channel is how the worker learns that we are gone, however we went (even SIGKILL).
    child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, "worker"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    child.channel?.unref();
    child.once("exit", (code, signal) => {
      if (stopping) return;
      // A worker that dies at once (LibreOffice missing, say) is retried ever more slowly, up to a minute.
      delayMs = Date.now() - startedAt > 60_000 ? 1000 : Math.min(delayMs * 2, 60_000);
      process.stderr.write(`quire: worker exited (${signal ?? code}); starting it again in ${delayMs / 1000} s\n`);
      restart = setTimeout(start, delayMs);
    });
  };
  start();
  return {
    assertRunning() {
      if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error("the worker process is not running");
    },
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        clearTimeout(restart);
        const current = child;
        // exitCode stays null for a process killed by a signal: both must be looked at.
        if (!current || current.exitCode !== null || current.signalCode !== null) return resolve();
        // The worker hands its jobs back within its own grace period; past this, it is killed.
        const deadline = setTimeout(() => current.kill("SIGKILL"), WORKER_STOP_DEADLINE_MS);
        current.once("exit", () => {
          clearTimeout(deadline);
          resolve();
        });
        current.kill("SIGTERM");
      }),
  };
}
