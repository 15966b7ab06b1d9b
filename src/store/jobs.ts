import { sql, type Kysely, type Selectable } from "kysely";
import type { JobKind } from "../domain/job-kinds.ts";
import type { StoreDialect } from "./dialects/dialect.ts";
import type { Database, JobsTable } from "./schema.ts";

export type Job = Selectable<JobsTable>;

/** Which jobs a worker may claim. */
export interface ClaimRules {
  /** The kinds it has handlers for: a job of any other kind is never claimed. */
  kinds: readonly JobKind[];
  /** Accounts whose jobs it must not take now (it runs as many of theirs as it may). */
  skipAccounts?: readonly number[];
}

/** Where a claim looks: one job whose lease ran out, or the oldest due job of an account. */
interface Candidate {
  accountId: number;
  jobId?: number;
}

/** Candidates tried per claim: enough for the claims that race for the same expired leases and accounts. */
const CANDIDATES = 8;

/**
 * The durable queue. A job is `queued` until a worker claims it with a lease; the worker renews
 * the lease while it works (heartbeat) and ends the job `done`, `failed`, or `queued` again for a
 * retry. A lease that runs out (the worker died) makes the job claimable again.
 */
export function jobsRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, "lockForClaim">) {
  /**
   * Where to look, best first: jobs whose lease ran out (their worker died), then the accounts
   * with due work, fewest running jobs (in every worker) first, then oldest due job first. The
   * accounts are walked through the (state, account_id, run_at) index one seek at a time (a loose
   * index scan), so the cost grows with the number of accounts with queued work, not with the
   * length of their queues.
   */
  async function claimCandidates(now: number, rules: ClaimRules): Promise<Candidate[]> {
    const kinds = sql.join(rules.kinds.map((k) => sql.lit(k)));
    const skip = new Set(rules.skipAccounts ?? []);
    let expiredQuery = db
      .selectFrom("jobs")
      .select(["id", "accountId"])
      .where("state", "=", "running")
      .where("leaseUntil", "<", now)
      .where("kind", "in", [...rules.kinds]);
    if (skip.size > 0) expiredQuery = expiredQuery.where("accountId", "not in", [...skip]);
    const expired = await expiredQuery
      .orderBy("runAt")
      .orderBy("id")
      .limit(CANDIDATES)
      .execute();
    const accounts = await sql<{ accountId: number; running: number; runAt: number | null }>`
      with recursive queued_accounts(account_id) as (
        select min(account_id) from jobs where state = 'queued'
        union all
        select (select min(n.account_id) from jobs n where n.state = 'queued' and n.account_id > q.account_id)
          from queued_accounts q where q.account_id is not null
      )
      select q.account_id,
        (select count(*) from jobs r where r.state = 'running' and r.account_id = q.account_id and r.lease_until >= ${now}) as running,
        (select min(j.run_at) from jobs j where j.state = 'queued' and j.account_id = q.account_id and j.run_at <= ${now} and j.kind in (${kinds})) as run_at
      from queued_accounts q where q.account_id is not null`.execute(db);
    const due = accounts.rows
      .filter((r) => r.runAt !== null && !skip.has(Number(r.accountId)))
      .sort((a, b) => Number(a.running) - Number(b.running) || Number(a.runAt) - Number(b.runAt) || Number(a.accountId) - Number(b.accountId))
      .slice(0, CANDIDATES);
    return [...expired.map((e) => ({ accountId: e.accountId, jobId: e.id })), ...due.map((r) => ({ accountId: Number(r.accountId) }))];
  }

  /**
   * Takes the candidate job (an expired lease), or the account's oldest due job that no other
   * claim holds; undefined when there is none any more (another worker was quicker).
   */
  async function claimOne(candidate: Candidate, owner: string, now: number, leaseMs: number, rules: ClaimRules): Promise<Job | undefined> {
    const pick = dialect.lockForClaim(
      candidate.jobId !== undefined
        ? db
            .selectFrom("jobs")
            .select("id")
            .where("id", "=", candidate.jobId)
            .where("state", "=", "running")
            .where("leaseUntil", "<", now)
        : db
            .selectFrom("jobs")
            .select("id")
            .where("state", "=", "queued")
            .where("accountId", "=", candidate.accountId)
            .where("runAt", "<=", now)
            .where("kind", "in", [...rules.kinds])
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
  }

  return {
    /**
     * Claims a due job (queued and due, or running with an expired lease: its worker died) of one
     * of `kinds`, sharing the workers fairly among accounts: the accounts with the fewest running
     * jobs go first, each with its oldest due job; `skipAccounts` get none. Undefined when there
     * is nothing to claim now.
     */
    async claimNext(owner: string, now: number, leaseMs: number, rules: ClaimRules): Promise<Job | undefined> {
      if (rules.kinds.length === 0) return undefined;
      for (const candidate of await claimCandidates(now, rules)) {
        const job = await claimOne(candidate, owner, now, leaseMs, rules);
        if (job) return job;
      }
      return undefined;
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

    /**
     * Ends a job this worker holds: done, failed for good, or queued again at `retryAt`. `uncounted`
     * gives the attempt back (a wait for the machine, such as a full disk, is no try of the job).
     */
    async finish(
      id: number,
      owner: string,
      now: number,
      outcome: { state: "done" | "failed"; error?: string } | { state: "queued"; retryAt: number; error: string; uncounted?: boolean },
    ): Promise<boolean> {
      const uncounted = outcome.state === "queued" && outcome.uncounted === true;
      const r = await db
        .updateTable("jobs")
        .set((eb) => ({
          ...(uncounted ? { attempts: eb("attempts", "-", 1) } : {}),
          state: outcome.state,
          leaseOwner: null,
          leaseUntil: null,
          lastError: outcome.error ?? "",
          runAt: outcome.state === "queued" ? outcome.retryAt : now,
          updatedAt: now,
        }))
        .where("id", "=", id)
        .where("leaseOwner", "=", owner)
        .where("state", "=", "running")
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    async enqueue(kind: JobKind, documentId: string, accountId: number, now: number): Promise<void> {
      await db
        .insertInto("jobs")
        .values({ kind, documentId, accountId, state: "queued", attempts: 0, runAt: now, leaseUntil: null, leaseOwner: null, lastError: "", createdAt: now, updatedAt: now })
        .execute();
    },

    /**
     * One `kind` job for every published document with pages that has none of that kind queued or
     * running (or for `documentId` alone), in one statement: work over old documents in the
     * background (`quire pages reencode`). Answers how many were queued.
     */
    async enqueueForPublished(kind: JobKind, now: number, documentId?: string): Promise<number> {
      let docs = db
        .selectFrom("documents")
        .select([
          sql<string>`${kind}`.as("kind"), "documentId", "accountId", sql<string>`${"queued"}`.as("state"), sql<number>`${0}`.as("attempts"),
          sql<number>`${now}`.as("runAt"), sql<string>`${""}`.as("lastError"), sql<number>`${now}`.as("createdAt"), sql<number>`${now}`.as("updatedAt"),
        ])
        .where("documents.state", "=", "A")
        .where("documents.pageCount", ">", 0)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("jobs as j").select("j.id").whereRef("j.documentId", "=", "documents.documentId").where("j.kind", "=", kind).where("j.state", "in", ["queued", "running"]))),
        );
      if (documentId !== undefined) docs = docs.where("documents.documentId", "=", documentId);
      const r = await db
        .insertInto("jobs")
        .columns(["kind", "documentId", "accountId", "state", "attempts", "runAt", "lastError", "createdAt", "updatedAt"])
        .expression(docs)
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0);
    },

    /** Documents still in P with no queued or running job: their job was lost or ended without them. */
    async findStranded(limit: number): Promise<Array<{ documentId: string; accountId: number; hasEndedJob: boolean }>> {
      const rows = await db
        .selectFrom("documents as d")
        .select(["d.documentId", "d.accountId"])
        .select((eb) =>
          eb.exists(eb.selectFrom("jobs as e").select("e.id").whereRef("e.documentId", "=", "d.documentId")).as("hasJob"),
        )
        .where("d.state", "=", "P")
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("jobs as j").select("j.id").whereRef("j.documentId", "=", "d.documentId").where("j.state", "in", ["queued", "running"]))),
        )
        .limit(limit)
        .execute();
      return rows.map((r) => ({ documentId: r.documentId, accountId: r.accountId, hasEndedJob: Boolean(r.hasJob) }));
    },

    /**
     * Documents in P since before `cutoff` (or since their file was replaced), whatever their job is doing; but a document whose job
     * waits for the machine (its `lastError` starts with `waiting.mark`) only from `waiting.cutoff`.
     */
    async findOverdue(cutoff: number, limit: number, waiting?: { mark: string; cutoff: number }): Promise<string[]> {
      let q = db
        .selectFrom("documents as d")
        .select("d.documentId")
        .where("d.state", "=", "P")
        .where("d.createdAt", "<", cutoff)
        // A document given a new file converts again from then (src/uploads/replace-file.ts): its bound starts anew.
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("jobs as r")
                .select("r.id")
                .whereRef("r.documentId", "=", "d.documentId")
                .where("r.kind", "=", "convert-document")
                .where("r.createdAt", ">=", cutoff),
            ),
          ),
        );
      if (waiting) {
        q = q.where(({ or, eb, not, exists, selectFrom }) =>
          or([
            eb("d.createdAt", "<", waiting.cutoff),
            not(
              exists(
                selectFrom("jobs as w")
                  .select("w.id")
                  .whereRef("w.documentId", "=", "d.documentId")
                  .where("w.state", "in", ["queued", "running"])
                  .where("w.lastError", "like", `${waiting.mark}%`),
              ),
            ),
          ]),
        );
      }
      const rows = await q.limit(limit).execute();
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

    /**
     * Fails queued jobs of a kind not in `known` queued before `queuedBefore` (a kind a newer
     * version wrote, or one since removed): no worker here claims them, so they would wait for
     * ever. Answers the jobs it failed.
     */
    async failUnknownKinds(known: readonly string[], queuedBefore: number, now: number, limit = 500): Promise<Array<{ id: number; kind: string; documentId: string }>> {
      const found = await db
        .selectFrom("jobs")
        .select(["id", "kind", "documentId"])
        .where("state", "=", "queued")
        .where("kind", "not in", known as JobKind[])
        .where("createdAt", "<", queuedBefore)
        .limit(limit)
        .execute();
      const failed: Array<{ id: number; kind: string; documentId: string }> = [];
      for (const job of found) {
        const result = await db
          .updateTable("jobs")
          .set({ state: "failed", leaseOwner: null, leaseUntil: null, lastError: `unknown job kind: ${job.kind}`, updatedAt: now })
          .where("id", "=", job.id)
          .where("state", "=", "queued")
          .executeTakeFirst();
        if (result.numUpdatedRows > 0n) failed.push(job);
      }
      return failed;
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
