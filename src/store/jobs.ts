import type { Kysely, Selectable } from "kysely";
import type { StoreDialect } from "./dialects/dialect.ts";
import type { Database, JobsTable } from "./schema.ts";

export type Job = Selectable<JobsTable>;

/**
 * The durable queue. A job is `queued` until a worker claims it with a lease; the worker renews
 * the lease while it works (heartbeat) and ends the job `done`, `failed`, or `queued` again for a
 * retry. A lease that runs out (the worker died) makes the job claimable again.
 */
export function jobsRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, "lockForClaim">) {
  return {
    /** Claims the oldest due job, or one whose lease expired; undefined when there is none. */
    async claimNext(owner: string, now: number, leaseMs: number): Promise<Job | undefined> {
      const pick = dialect.lockForClaim(
        db
          .selectFrom("jobs")
          .select("id")
          .where((eb) =>
            eb.or([
              eb.and([eb("state", "=", "queued"), eb("runAt", "<=", now)]),
              eb.and([eb("state", "=", "running"), eb("leaseUntil", "<", now)]),
            ]),
          )
          .orderBy("runAt")
          .orderBy("id")
          .limit(1),
      );
      return db
        .updateTable("jobs")
        .set((eb) => ({ state: "running", leaseOwner: owner, leaseUntil: now + leaseMs, attempts: eb("attempts", "+", 1), updatedAt: now }))
        .where("id", "=", (eb) => eb.selectFrom(pick.as("due")).select("due.id"))
        .returningAll()
        .executeTakeFirst();
    },

    /** Extends the lease; false when the job is no longer this worker's (it must stop). */
    async heartbeat(id: number, owner: string, now: number, leaseMs: number): Promise<boolean> {
      const r = await db
        .updateTable("jobs")
        .set({ leaseUntil: now + leaseMs, updatedAt: now })
        .where("id", "=", id)
        .where("leaseOwner", "=", owner)
        .where("state", "=", "running")
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    /** Ends a job this worker holds: done, failed for good, or queued again at `retryAt`. */
    async finish(id: number, owner: string, now: number, outcome: { state: "done" | "failed"; error?: string } | { state: "queued"; retryAt: number; error: string }): Promise<boolean> {
      const r = await db
        .updateTable("jobs")
        .set({
          state: outcome.state,
          leaseOwner: null,
          leaseUntil: null,
          lastError: outcome.error ?? "",
          runAt: outcome.state === "queued" ? outcome.retryAt : now,
          updatedAt: now,
        })
        .where("id", "=", id)
        .where("leaseOwner", "=", owner)
        .where("state", "=", "running")
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    async enqueue(kind: string, documentId: string, now: number): Promise<void> {
      await db
        .insertInto("jobs")
        .values({ kind, documentId, state: "queued", attempts: 0, runAt: now, leaseUntil: null, leaseOwner: null, lastError: "", createdAt: now, updatedAt: now })
        .execute();
    },

    /** Documents still in P with no queued or running job: their job was lost or ended without them. */
    async findStranded(limit: number): Promise<Array<{ documentId: string; hasEndedJob: boolean }>> {
      const rows = await db
        .selectFrom("documents as d")
        .select("d.documentId")
        .select((eb) =>
          eb.exists(eb.selectFrom("jobs as e").select("e.id").whereRef("e.documentId", "=", "d.documentId")).as("hasJob"),
        )
        .where("d.state", "=", "P")
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("jobs as j").select("j.id").whereRef("j.documentId", "=", "d.documentId").where("j.state", "in", ["queued", "running"]))),
        )
        .limit(limit)
        .execute();
      return rows.map((r) => ({ documentId: r.documentId, hasEndedJob: Boolean(r.hasJob) }));
    },

    /** Documents in P since before `cutoff`, whatever their job is doing. */
    async findOverdue(cutoff: number, limit: number): Promise<string[]> {
      const rows = await db.selectFrom("documents").select("documentId").where("state", "=", "P").where("createdAt", "<", cutoff).limit(limit).execute();
      return rows.map((r) => r.documentId);
    },

    /** Ends every job of a document, whoever holds it (the document is finished or gone). */
    async failAllFor(documentId: string, error: string, now: number): Promise<void> {
      await db
        .updateTable("jobs")
        .set({ state: "failed", leaseOwner: null, leaseUntil: null, lastError: error, updatedAt: now })
        .where("documentId", "=", documentId)
        .where("state", "in", ["queued", "running"])
        .execute();
    },

    /** For metrics and /readyz: jobs per state, and the due queue's length and oldest due time. */
    async queueStats(now: number): Promise<{ byState: Record<string, number>; due: number; oldestDueAt: number | undefined }> {
      const states = await db.selectFrom("jobs").select(["state", (eb) => eb.fn.countAll<number>().as("n")]).groupBy("state").execute();
      const due = await db
        .selectFrom("jobs")
        .select([(eb) => eb.fn.countAll<number>().as("n"), (eb) => eb.fn.min("runAt").as("oldest")])
        .where("state", "=", "queued")
        .where("runAt", "<=", now)
        .executeTakeFirstOrThrow();
      return {
        byState: Object.fromEntries(states.map((r) => [r.state, Number(r.n)])),
        due: Number(due.n),
        oldestDueAt: due.oldest === null ? undefined : Number(due.oldest),
      };
    },

    async getForDocument(documentId: string): Promise<Job[]> {
      return db.selectFrom("jobs").selectAll().where("documentId", "=", documentId).orderBy("id").execute();
    },
  };
}

export type JobsRepo = ReturnType<typeof jobsRepo>;
