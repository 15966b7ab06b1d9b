import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import { webhookSignature } from "../domain/webhook-signature.ts";
import { nextAttemptAt, type RetryPolicy } from "../domain/webhooks.ts";
import type { Job } from "../store/jobs.ts";
import type { Store } from "../store/open-store.ts";
import type { Delivery } from "../store/webhook-deliveries.ts";
import type { JobContext, JobHandler, JobOutcome } from "./job-registry.ts";
import { postWebhook, type WebhookPostOptions } from "./webhook-post.ts";

/** How webhook deliveries are posted and retried, from the configuration. */
export function webhookDeliverySettings(
  config: Pick<Config, "fetchAllowPrivate" | "webhookTimeoutMs" | "webhookRetryScheduleMs" | "webhookRetryWindowMs">,
): Pick<WebhookDeliveryDeps, "post" | "retry"> {
  return {
    post: { allowPrivate: config.fetchAllowPrivate, timeoutMs: config.webhookTimeoutMs },
    retry: { scheduleMs: config.webhookRetryScheduleMs, windowMs: config.webhookRetryWindowMs },
  };
}

export interface WebhookDeliveryDeps {
  store: Pick<Store, "webhooks" | "webhookDeliveries">;
  log: Logger;
  post: WebhookPostOptions;
  retry: RetryPolicy;
  now?: () => number;
}

/**
 * The `webhook-delivery` job of a document (decisions §12): posts the document's pending
 * deliveries oldest first, one at a time, and stops at the first that must wait (its next attempt
 * is later, or another worker is posting it). Every attempt is recorded, and its retry scheduled
 * as a job, in one transaction; a later delivery of the document is never posted before the
 * earlier one is acknowledged or failed for good. A worker that dies mid-attempt leaves the
 * delivery leased for one attempt's time; the job's next run (after its own lease) posts it again:
 * at least once, with the same `Quire-Delivery` id.
 */
export function webhookDeliveryHandler(deps: WebhookDeliveryDeps): JobHandler {
  const now = deps.now ?? Date.now;
  // Long enough for one attempt to end on its own (its timeout), never much longer.
  const leaseMs = deps.post.timeoutMs + 2000;

  async function attempt(head: Delivery, owner: string, signal: AbortSignal): Promise<"next" | "wait"> {
    const hook = await deps.store.webhooks.getForDelivery(head.accountId);
    if (!hook) {
      await deps.store.webhookDeliveries.finishAttempt(head, owner, now(), { status: "failed", error: "The webhook was removed.", attempted: false });
      return "next";
    }
    const headers = {
      "quire-event": head.event,
      "quire-delivery": head.deliveryId,
      "quire-signature": webhookSignature(hook.secret, head.body, now()),
    };
    const result = await postWebhook(hook.url, headers, head.body, deps.post, signal);
    if (signal.aborted) throw signal.reason; // the lease is lost or the worker stops: the attempt is not ours to record
    const at = now();
    if (result.ok) {
      await deps.store.webhookDeliveries.finishAttempt(head, owner, at, { status: "delivered" });
      return "next";
    }
    const next = nextAttemptAt(head.attempts + 1, Number(head.createdAt), at, deps.retry);
    deps.log.info({ deliveryId: head.deliveryId, documentId: head.documentId, attempt: head.attempts + 1, error: result.error, retryAt: next }, "webhook delivery failed");
    if (next === undefined) {
      await deps.store.webhookDeliveries.finishAttempt(head, owner, at, { status: "failed", error: result.error, attempted: true });
      return "next";
    }
    await deps.store.webhookDeliveries.finishAttempt(head, owner, at, { status: "pending", error: result.error, nextAttemptAt: next });
    return "wait";
  }

  return {
    async run({ job, signal }: JobContext): Promise<JobOutcome> {
      const owner = `job-${job.id}-${randomBytes(4).toString("hex")}`;
      for (;;) {
        if (signal.aborted) throw signal.reason;
        const head = await deps.store.webhookDeliveries.headOf(job.documentId);
        if (!head) return "success";
        const at = now();
        if (Number(head.nextAttemptAt) > at) {
          await deps.store.webhookDeliveries.scheduleJob(job.documentId, head.accountId, Number(head.nextAttemptAt), at);
          return "success";
        }
        if (!(await deps.store.webhookDeliveries.lease(head.id, owner, at, leaseMs))) {
          // Another worker is posting it (or died doing so): look again when its lease ends.
          await deps.store.webhookDeliveries.scheduleJob(job.documentId, head.accountId, Math.max(at, Number(head.leaseUntil ?? at)) + 100, at);
          return "success";
        }
        if ((await attempt(head, owner, signal)) === "wait") return "success";
      }
    },

    /**
     * The job itself failed (the store was unreachable every time, or workers died on it too
     * often): the deliveries stay pending and a later job takes them up, so nothing is lost.
     */
    async giveUp(job: Job): Promise<void> {
      const at = now();
      const head = await deps.store.webhookDeliveries.headOf(job.documentId);
      if (head) await deps.store.webhookDeliveries.scheduleJob(job.documentId, head.accountId, at + (deps.retry.scheduleMs[0] ?? 10_000), at);
    },
  };
}

/**
 * Gives a job back to documents whose deliveries are pending without one (a document's jobs are
 * removed with it, and a crash may lose one), and forgets finished deliveries older than
 * `historyMs`. Run by the worker's sweeper.
 */
export async function sweepWebhookDeliveries(opts: { store: Pick<Store, "webhookDeliveries">; log: Logger; historyMs: number; now?: () => number }): Promise<void> {
  const at = (opts.now ?? Date.now)();
  const stranded = await opts.store.webhookDeliveries.findStranded(500);
  for (const s of stranded) await opts.store.webhookDeliveries.scheduleJob(s.documentId, s.accountId, Math.max(at, s.nextAttemptAt), at);
  const pruned = await opts.store.webhookDeliveries.pruneFinished(at - opts.historyMs);
  if (stranded.length + pruned > 0) opts.log.info({ requeued: stranded.length, pruned }, "webhook deliveries swept");
}
