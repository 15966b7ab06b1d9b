import type { Kysely, Selectable } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import { WEBHOOK_DELIVERY } from "../domain/job-kinds.ts";
import { deliveryBody, newDeliveryId, type WebhookEvent } from "../domain/webhooks.ts";
import type { Database, WebhookDeliveriesTable } from "./schema.ts";

export type Delivery = Selectable<WebhookDeliveriesTable>;

/** How an attempt ended: acknowledged (2xx), failed for good, or to be tried again at `nextAttemptAt`. */
export type AttemptOutcome =
  | { status: "delivered" }
  | { status: "failed"; error: string; attempted: boolean }
  | { status: "pending"; error: string; nextAttemptAt: number };

/**
 * Called by the store's own state changes (P -> A, P -> F, delete) with their transaction: when
 * the account has a webhook that wants `event`, each record's delivery is written there, with a
 * job to deliver it, so the change and its notice are committed together or not at all
 * (decisions §12). `load` reads the records as they are now in the transaction; it is called
 * only when a delivery is wanted, so accounts without a webhook pay one indexed read.
 */
export async function recordDocumentEvent(
  trx: Kysely<Database>,
  change: { event: WebhookEvent; accountId: number; now: number },
  load: () => Promise<DocumentRecord[]>,
): Promise<void> {
  const hook = await trx.selectFrom("webhooks").select("events").where("accountId", "=", change.accountId).executeTakeFirst();
  if (!hook || !(JSON.parse(hook.events) as string[]).includes(change.event)) return;
  for (const record of await load()) {
    await writeDelivery(trx, { ...change, documentId: record.documentId, body: deliveryBody(change.event, record, change.now) });
  }
}

/** One delivery and the job that makes it, in the caller's transaction. */
async function writeDelivery(trx: Kysely<Database>, d: { event: WebhookEvent; accountId: number; documentId: string; body: string; now: number }): Promise<void> {
  await trx
    .insertInto("webhookDeliveries")
    .values({
      deliveryId: newDeliveryId(), accountId: d.accountId, documentId: d.documentId, event: d.event,
      body: d.body, status: "pending", attempts: 0, nextAttemptAt: d.now,
      leaseOwner: null, leaseUntil: null, lastError: "", createdAt: d.now, deliveredAt: null, updatedAt: d.now,
    })
    .execute();
  await ensureDeliveryJob(trx, d.documentId, d.accountId, d.now, d.now);
}

/**
 * `comment.created` (decisions §16) for each of these new comments whose account's webhook wants
 * it, written in the transaction that stores them; a body is made only then. One read of the
 * accounts' webhooks for all of them.
 */
export async function recordCommentEvents(
  trx: Kysely<Database>,
  events: ReadonlyArray<{ accountId: number; documentId: string; now: number; body: () => string }>,
): Promise<void> {
  if (events.length === 0) return;
  const accounts = [...new Set(events.map((e) => e.accountId))];
  const hooks = await trx.selectFrom("webhooks").select(["accountId", "events"]).where("accountId", "in", accounts).execute();
  const wanting = new Set(hooks.filter((h) => (JSON.parse(h.events) as string[]).includes("comment.created")).map((h) => h.accountId));
  for (const e of events) {
    if (wanting.has(e.accountId)) await writeDelivery(trx, { event: "comment.created", accountId: e.accountId, documentId: e.documentId, now: e.now, body: e.body() });
  }
}

/**
 * Makes sure a queued delivery job of the document runs no later than `runAt`. One job drains a
 * document's deliveries in order; a second one, if two writers race, finds the head leased or
 * gone and changes nothing.
 */
async function ensureDeliveryJob(db: Kysely<Database>, documentId: string, accountId: number, runAt: number, now: number): Promise<void> {
  const queued = await db
    .selectFrom("jobs")
    .select(["id", "runAt"])
    .where("kind", "=", WEBHOOK_DELIVERY)
    .where("documentId", "=", documentId)
    .where("state", "=", "queued")
    .orderBy("runAt")
    .executeTakeFirst();
  if (queued) {
    if (Number(queued.runAt) > runAt) await db.updateTable("jobs").set({ runAt, updatedAt: now }).where("id", "=", queued.id).where("state", "=", "queued").execute();
    return;
  }
  await db
    .insertInto("jobs")
    .values({
      kind: WEBHOOK_DELIVERY, documentId, accountId, state: "queued", attempts: 0, runAt,
      leaseOwner: null, leaseUntil: null, lastError: "", createdAt: now, updatedAt: now,
    })
    .execute();
}

export function webhookDeliveriesRepo(db: Kysely<Database>) {
  return {
    /** The document's oldest delivery not yet acknowledged or failed: the only one that may be posted now. */
    async headOf(documentId: string): Promise<Delivery | undefined> {
      return db
        .selectFrom("webhookDeliveries")
        .selectAll()
        .where("documentId", "=", documentId)
        .where("status", "=", "pending")
        .orderBy("id")
        .limit(1)
        .executeTakeFirst();
    },

    /** Takes the delivery for one attempt; false when another worker holds it (or it is done). */
    async lease(id: number, owner: string, now: number, leaseMs: number): Promise<boolean> {
      const r = await db
        .updateTable("webhookDeliveries")
        .set({ leaseOwner: owner, leaseUntil: now + leaseMs, updatedAt: now })
        .where("id", "=", id)
        .where("status", "=", "pending")
        .where((w) => w.or([w("leaseUntil", "is", null), w("leaseUntil", "<", now)]))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    /**
     * Records an attempt of a delivery this owner leased, and for a retry the job that makes it,
     * in one transaction; false when the lease was lost meanwhile (another worker took over).
     */
    async finishAttempt(delivery: Pick<Delivery, "id" | "documentId" | "accountId">, owner: string, now: number, outcome: AttemptOutcome): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const counted = outcome.status !== "failed" || outcome.attempted;
        const r = await trx
          .updateTable("webhookDeliveries")
          .set((eb) => ({
            status: outcome.status,
            attempts: counted ? eb("attempts", "+", 1) : eb.ref("attempts"),
            lastError: outcome.status === "delivered" ? "" : outcome.error,
            deliveredAt: outcome.status === "delivered" ? now : null,
            nextAttemptAt: outcome.status === "pending" ? outcome.nextAttemptAt : now,
            leaseOwner: null,
            leaseUntil: null,
            updatedAt: now,
          }))
          .where("id", "=", delivery.id)
          .where("leaseOwner", "=", owner)
          .where("status", "=", "pending")
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) return false;
        if (outcome.status === "pending") await ensureDeliveryJob(trx, delivery.documentId, delivery.accountId, outcome.nextAttemptAt, now);
        return true;
      });
    },

    /** A delivery job for the document at `runAt` (the head is waiting for its time or another worker). */
    async scheduleJob(documentId: string, accountId: number, runAt: number, now: number): Promise<void> {
      await ensureDeliveryJob(db, documentId, accountId, runAt, now);
    },

    /**
     * Documents with pending deliveries and no queued or running delivery job: their job was
     * removed (a document's jobs go with it) or lost. The sweeper gives them one again.
     */
    async findStranded(limit: number): Promise<Array<{ documentId: string; accountId: number; nextAttemptAt: number }>> {
      const rows = await db
        .selectFrom("webhookDeliveries as d")
        .select(["d.documentId", "d.accountId"])
        .select((eb) => eb.fn.min("d.nextAttemptAt").as("nextAttemptAt"))
        .where("d.status", "=", "pending")
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("jobs as j")
                .select("j.id")
                .whereRef("j.documentId", "=", "d.documentId")
                .where("j.kind", "=", WEBHOOK_DELIVERY)
                .where("j.state", "in", ["queued", "running"]),
            ),
          ),
        )
        .groupBy(["d.documentId", "d.accountId"])
        .limit(limit)
        .execute();
      return rows.map((r) => ({ documentId: r.documentId, accountId: r.accountId, nextAttemptAt: Number(r.nextAttemptAt) }));
    },

    /** An account's deliveries, newest first (`svc.webhook.deliveries`), optionally of one document. */
    async list(accountId: number, q: { documentId?: string; startIndex: number; pageSize: number }): Promise<{ totalCount: number; items: Delivery[] }> {
      let base = db.selectFrom("webhookDeliveries").where("accountId", "=", accountId);
      if (q.documentId !== undefined) base = base.where("documentId", "=", q.documentId);
      const counted = await base.select((eb) => eb.fn.countAll<number | string | bigint>().as("n")).executeTakeFirstOrThrow();
      const totalCount = Number(counted.n);
      if (q.pageSize === 0 || q.startIndex >= totalCount) return { totalCount, items: [] };
      const items = await base.selectAll().orderBy("id", "desc").limit(q.pageSize).offset(q.startIndex).execute();
      return { totalCount, items };
    },

    /** Removes finished deliveries written before `cutoff`: the history is of recent deliveries. */
    async pruneFinished(cutoff: number): Promise<number> {
      const r = await db.deleteFrom("webhookDeliveries").where("status", "<>", "pending").where("createdAt", "<", cutoff).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
