import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { countOf } from "../domain/counts.ts";
import { DISK_WAIT_MARK, JobFailure, machineFaultOf } from "../domain/job-failure.ts";
import type { JobKind } from "../domain/job-kinds.ts";
import type { Job, JobsRepo } from "../store/jobs.ts";
import { backoffDelay } from "./backoff.ts";
import { checkRegistry, type JobRegistry } from "./job-registry.ts";

export interface WorkerOptions {
  jobs: JobsRepo;
  registry: JobRegistry;
  log: Logger;
  concurrency: number;
  /**
   * Jobs of one account the `concurrency` slots run at once (at most `concurrency`): below it,
   * another account's job always finds one of them free, however long the first one's take.
   */
  maxRunningPerAccount: number;
  /**
   * Slots beyond `concurrency` that take only jobs of accounts with nothing running here: a second
   * account's document starts at once while one account fills every slot, and one account alone
   * still has them all (default 0).
   */
  newcomerSlots?: number;
  leaseMs: number;
  heartbeatMs: number;
  /** The longest an idle slot waits before it looks for work again, woken or not. */
  pollMs: number;
  /**
   * Hears of jobs queued by any process (the store's dialect: src/store/dialects/*-job-wakeups.ts), so an idle slot claims at
   * once instead of at its next poll; resolves with how to stop hearing. Polling stays the safety
   * net: jobs due later (retries) and wake-ups that never came are found by it.
   */
  watchQueuedJobs?: (onQueued: () => void) => Promise<() => Promise<void>>;
  /** A run longer than this is aborted and ends the job for good (decisions §6: limits). */
  jobTimeoutMs: number;
  maxAttempts: number;
  /**
   * A job that failed because the disk was full (issue 23 item 0d) is tried again every `retryMs`
   * without using up its attempts, until `forMs` after it was queued (QUIRE_DISK_FULL_WAIT_HOURS);
   * then its document fails saying so. Unset: such failures are retried as passing trouble.
   */
  diskWait?: { retryMs: number; forMs: number };
  retryBaseMs: number;
  retryMaxMs: number;
  /** How long `stop` waits for running jobs before aborting them and handing them back. */
  stopGraceMs: number;
  now?: () => number;
  /** Metrics hook: how each run ended (success, failed, skipped, retry, disk_wait, handed_back, lease_lost) and its wall time. */
  onRunEnd?: (job: Job, outcome: string, seconds: number) => void;
}

export interface RunningWorker {
  readonly owner: string;
  /** Stops claiming, lets running jobs finish within the grace period, hands back the rest. */
  stop(): Promise<void>;
  /** Resolves when every slot has ended. */
  readonly done: Promise<void>;
}

/**
 * Runs `concurrency` claim loops against the durable queue until stopped. Throws at once, before
 * claiming anything, unless the registry has a handler for every job kind.
 */
export function startWorker(opts: WorkerOptions): RunningWorker {
  checkRegistry(opts.registry);
  const kinds = Object.keys(opts.registry) as JobKind[];
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const now = opts.now ?? Date.now;
  const stopping = new AbortController();
  const running = new Set<AbortController>();

  const perAccount = Math.max(1, opts.maxRunningPerAccount);
  /** Jobs this worker runs per account; an account at `perAccount` is skipped by the claims. */
  const runningByAccount = new Map<number, number>();
  let claiming: Promise<unknown> = Promise.resolve();
  /** One claim at a time in this worker, so two slots cannot both take an account's last free place. */
  const claim = (newcomersOnly: boolean): Promise<Job | undefined> => {
    const next = claiming.then(async () => {
      const skipAccounts = newcomersOnly ? [...runningByAccount.keys()] : [...runningByAccount].filter(([, n]) => n >= perAccount).map(([id]) => id);
      const job = await opts.jobs.claimNext(owner, now(), opts.leaseMs, { kinds, skipAccounts });
      if (job) runningByAccount.set(job.accountId, (runningByAccount.get(job.accountId) ?? 0) + 1);
      return job;
    });
    claiming = next.catch(() => undefined);
    return next;
  };
  const released = (job: Job): void => {
    const n = (runningByAccount.get(job.accountId) ?? 1) - 1;
    if (n > 0) runningByAccount.set(job.accountId, n);
    else runningByAccount.delete(job.accountId);
  };

  const runOne = async (job: Job): Promise<void> => {
    const handler = Object.hasOwn(opts.registry, job.kind) ? opts.registry[job.kind] : undefined;
    if (!handler) {
      // Never claimed (claimNext takes only the registry's kinds); ended rather than left to its lease if it were.
      await opts.jobs.finish(job.id, owner, now(), { state: "failed", error: `no handler for job kind ${job.kind}` });
      return;
    }
    const abort = new AbortController();
    running.add(abort);
    let leaseLost = false;
    const beat = setInterval(() => {
      opts.jobs.heartbeat(job.id, owner, now(), opts.leaseMs).then(
        (held) => {
          if (!held) {
            leaseLost = true;
            abort.abort(new Error("lease lost"));
          }
        },
        (err: unknown) => opts.log.warn({ err, jobId: job.id }, "heartbeat failed"),
      );
    }, opts.heartbeatMs);
    const timeout = setTimeout(() => abort.abort(new JobFailure("limits", "The conversion took too long.")), opts.jobTimeoutMs);
    const log = opts.log.child({ jobId: job.id, documentId: job.documentId, kind: job.kind, attempt: job.attempts, reqId: job.requestId ?? undefined });
    const startedAt = performance.now();
    let ended = "failed";
    try {
      if (job.attempts > opts.maxAttempts) {
        // Claimed again after workers died on it every time: stop trying.
        throw new JobFailure("internal", "The conversion was interrupted too many times.");
      }
      const outcome = await handler.run({ job, signal: abort.signal });
      log.info({ outcome, seconds: Number(((performance.now() - startedAt) / 1000).toFixed(3)) }, "job finished");
      ended = outcome;
      await opts.jobs.finish(job.id, owner, now(), { state: outcome === "failed" ? "failed" : "done" });
    } catch (err) {
      if (leaseLost) {
        log.warn("lease lost; another worker owns the job now");
        ended = "lease_lost";
        return;
      }
      let reason = abort.signal.aborted && abort.signal.reason instanceof JobFailure ? abort.signal.reason : err;
      if (stopping.signal.aborted && !(reason instanceof JobFailure)) {
        // Handed back on shutdown: the next worker starts it again without waiting.
        await opts.jobs.finish(job.id, owner, now(), { state: "queued", retryAt: now(), error: "worker stopped" });
        ended = "handed_back";
        return;
      }
      if (machineFaultOf(reason) === "disk-full" && opts.diskWait) {
        const message = String((reason as Error)?.message ?? reason);
        if (now() - job.createdAt < opts.diskWait.forMs) {
          const retryAt = now() + opts.diskWait.retryMs;
          log.warn({ err: reason, retryAt }, "the data disk is full; the job waits for space");
          await opts.jobs.finish(job.id, owner, now(), { state: "queued", retryAt, error: DISK_WAIT_MARK + message, uncounted: true });
          ended = "disk_wait";
          return;
        }
        reason = new JobFailure("internal", `The server's disk was full for ${waitText(opts.diskWait.forMs)}, so the document could not be converted.`, { cause: reason });
      }
      // Only what may go differently next time is retried: a JobFailure says which it is.
      const transient = !(reason instanceof JobFailure) || reason.transient;
      const detail = reason instanceof JobFailure ? reason.detail : undefined;
      if (transient && job.attempts < opts.maxAttempts) {
        const retryAt = now() + backoffDelay(job.attempts, opts.retryBaseMs, opts.retryMaxMs);
        log.warn({ err: reason, detail, retryAt }, "job failed; will retry");
        await opts.jobs.finish(job.id, owner, now(), { state: "queued", retryAt, error: String((reason as Error)?.message ?? reason) });
        ended = "retry";
        return;
      }
      log.warn({ err: reason, detail }, "job failed for good");
      // A giveUp that throws must still end the job, or it would be claimed again at every lease
      // expiry; its document, left in P with an ended job, is failed by the sweeper.
      await handler.giveUp(job, reason).catch((giveUpErr: unknown) => log.error({ err: giveUpErr }, "recording the failure failed"));
      await opts.jobs.finish(job.id, owner, now(), { state: "failed", error: String((reason as Error)?.message ?? reason) });
    } finally {
      clearInterval(beat);
      clearTimeout(timeout);
      running.delete(abort);
      opts.onRunEnd?.(job, ended, (performance.now() - startedAt) / 1000);
    }
  };

  /** Wake-ups heard so far: a slot compares it with the count it saw before its claim. */
  let wakeUps = 0;
  const waiting = new Set<() => void>();
  const wake = (): void => {
    wakeUps++;
    for (const end of waiting) end();
  };
  /**
   * Waits `pollMs`, less if a job is queued meanwhile or the worker stops. A wake-up heard since
   * `seen` ends it at once: its job may have been committed just after the claim looked. Busy
   * slots need no such memory, as a slot claims again as soon as its job ends.
   */
  const idle = (seen: number): Promise<void> => {
    if (wakeUps !== seen || stopping.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const end = (): void => {
        clearTimeout(timer);
        waiting.delete(end);
        stopping.signal.removeEventListener("abort", end);
        resolve();
      };
      const timer = setTimeout(end, opts.pollMs);
      waiting.add(end);
      stopping.signal.addEventListener("abort", end);
    });
  };
  // Never awaited before claiming: the slots poll from the start, wake-ups only make them quicker.
  const unwatching = opts.watchQueuedJobs?.(wake).catch((err: unknown) => {
    opts.log.warn({ err }, "cannot hear of queued jobs; idle slots poll only");
    return undefined;
  });

  /** Regular slots running a job: a newcomer slot claims only while they all are. */
  let regularBusy = 0;
  const slot = async (newcomersOnly: boolean): Promise<void> => {
    while (!stopping.signal.aborted) {
      let seen = wakeUps;
      let job: Job | undefined;
      try {
        if (!newcomersOnly || regularBusy >= opts.concurrency) job = await claim(newcomersOnly);
      } catch (err) {
        opts.log.error({ err }, "claiming a job failed");
        // A failing database gets the whole interval, unless a job is queued after all.
        seen = wakeUps;
      }
      if (!job) {
        await idle(seen);
        continue;
      }
      if (!newcomersOnly) regularBusy++;
      await runOne(job)
        .catch((err: unknown) => opts.log.error({ err, jobId: job.id }, "job bookkeeping failed"))
        .finally(() => {
          released(job);
          if (!newcomersOnly) regularBusy--;
        });
    }
  };

  const slots = [...Array.from({ length: opts.concurrency }, () => slot(false)), ...Array.from({ length: opts.newcomerSlots ?? 0 }, () => slot(true))];
  const done = Promise.all(slots).then(() => {});
  return {
    owner,
    done,
    async stop() {
      stopping.abort();
      const unwatched = unwatching
        ?.then((unwatch) => unwatch?.())
        .catch((err: unknown) => opts.log.warn({ err }, "closing the queued-jobs watch failed"));
      const grace = sleep(opts.stopGraceMs).then(() => {
        for (const a of running) a.abort(new Error("worker stopping"));
      });
      await Promise.race([done, grace]);
      await done;
      await unwatched;
    },
  };
}

/** "6 hours", "90 minutes": a wait as the failure message tells it. */
function waitText(ms: number): string {
  return ms >= 3_600_000 && ms % 3_600_000 === 0 ? countOf(ms / 3_600_000, "hour") : countOf(Math.max(1, Math.round(ms / 60_000)), "minute");
}
