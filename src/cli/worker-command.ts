import { mkdir, rm } from "node:fs/promises";
import { basename } from "node:path";
import pino from "pino";
import type { Config } from "../config.ts";
import { claimOfficeWorkDir } from "../convert/office-workdir.ts";
import { assertSandboxWorks, sandboxSettings } from "../convert/sandbox.ts";
import { openServices } from "../services.ts";
import { startWorkerRole } from "../worker-role.ts";

/** `quire worker`: takes conversion jobs from the store until SIGTERM; never loads the HTTP stack. */
export async function workerCommand(config: Readonly<Config>): Promise<void> {
  const log = pino({ level: config.logLevel, base: { role: "worker", pid: process.pid } });
  // Fails closed, before anything is opened: no converter ever runs unconfined unless asked to.
  const sandbox = sandboxSettings(config);
  assertSandboxWorks(sandbox);
  if (sandbox.kind === "none") log.warn("QUIRE_UNSAFE_NO_SANDBOX=1: converters run without a sandbox; a document can make them read this machine's files");
  // Installed before anything starts, so a stop during start-up still closes what was started
  // (LibreOffice runs in process groups of its own and would outlive us otherwise).
  const cleanups: Array<() => Promise<void>> = [];
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => log.error({ err }, "stopping failed"));
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
  // Started by `quire serve`: stop as on SIGTERM when it goes, rather than run on as an orphan.
  if (process.channel) {
    process.channel.unref();
    process.once("disconnect", () => {
      log.warn("the serving process is gone; stopping");
      void stop();
    });
  }

  const services = await openServices(config, {
    onUnavailable: (err, attempt) => log.warn({ err, attempt }, "the database cannot be reached yet; trying again"),
  });
  cleanups.push(() => services.close());
  await mkdir(config.tmpDir, { recursive: true });
  const officeDir = await claimOfficeWorkDir(config.tmpDir);
  cleanups.push(() => rm(officeDir, { recursive: true, force: true }));
  const role = await startWorkerRole({
    config,
    services,
    log,
    officeDir,
    sandbox: sandboxSettings(config, basename(officeDir)),
    onStarted: (close) => cleanups.push(close),
    stopping: () => stopping,
  });
  if (!role) return;
  if (role.opsPort !== undefined) log.info({ port: role.opsPort }, "metrics and health checks listening");
  log.info({ owner: role.worker.owner, concurrency: config.workerConcurrency }, "worker started");
}
