import { sql, type Kysely, type Selectable } from "kysely";
import { CONVERT_DOCUMENT, CONVERT_PAGES } from "../domain/job-kinds.ts";
import type { Database, PageFanoutsTable } from "./schema.ts";

export type PageFanout = Selectable<PageFanoutsTable>;

/** One range of a split document, with what its job needs of the document's split. */
export interface PageRangeWork {
  documentId: string;
  firstPage: number;
  lastPage: number;
  done: boolean;
  pageCount: number;
  pdfKey: string;
  textLayerIsOurs: boolean;
}

export interface FanOutPlan {
  documentId: string;
  accountId: number;
  pageCount: number;
  pdfKey: string;
  textLayerIsOurs: boolean;
  ranges: ReadonlyArray<{ first: number; last: number }>;
  requestId?: string | null;
}

/**
 * Documents split into page-range jobs (issue 16): the split, its ranges and their jobs are written
 * in one transaction; each range is marked done once, and the range that is done last enqueues the
 * document's job again, in the same transaction, to publish what the ranges made.
 */
export function pageRangesRepo(db: Kysely<Database>) {
  return {
    /**
     * Splits a document in P into ranges, each with its queued job. False, and nothing written, when
     * the document is no longer in P or was split already (a second run of the job that splits it).
     */
    async fanOut(plan: FanOutPlan, now: number): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const doc = await trx.selectFrom("documents").select("state").where("documentId", "=", plan.documentId).executeTakeFirst();
        if (doc?.state !== "P") return false;
        const inserted = await trx
          .insertInto("pageFanouts")
          .values({
            documentId: plan.documentId, pageCount: plan.pageCount, rangesLeft: plan.ranges.length, pdfKey: plan.pdfKey,
            textLayerIsOurs: plan.textLayerIsOurs ? 1 : 0, coverWidth: 0, coverHeight: 0, createdAt: now,
          })
          .onConflict((oc) => oc.column("documentId").doNothing())
          .returning("documentId")
          .executeTakeFirst();
        if (!inserted) return false;
        for (const r of plan.ranges) {
          const job = await trx
            .insertInto("jobs")
            .values({
              kind: CONVERT_PAGES, documentId: plan.documentId, accountId: plan.accountId, state: "queued", attempts: 0, runAt: now,
              leaseUntil: null, leaseOwner: null, lastError: "", createdAt: now, updatedAt: now, requestId: plan.requestId ?? null,
            })
            .returning("id")
            .executeTakeFirstOrThrow();
          await trx
            .insertInto("pageRanges")
            .values({ documentId: plan.documentId, firstPage: r.first, lastPage: r.last, jobId: job.id, pagesReady: 0, done: 0 })
            .execute();
        }
        return true;
      });
    },

    async getFanout(documentId: string): Promise<PageFanout | undefined> {
      return db.selectFrom("pageFanouts").selectAll().where("documentId", "=", documentId).executeTakeFirst();
    },

    /** The range a CONVERT_PAGES job renders; undefined when its document (or split) is gone. */
    async forJob(jobId: number): Promise<PageRangeWork | undefined> {
      const row = await db
        .selectFrom("pageRanges as r")
        .innerJoin("pageFanouts as f", "f.documentId", "r.documentId")
        .select(["r.documentId", "r.firstPage", "r.lastPage", "r.done", "f.pageCount", "f.pdfKey", "f.textLayerIsOurs"])
        .where("r.jobId", "=", jobId)
        .executeTakeFirst();
      return row && { ...row, done: row.done === 1, textLayerIsOurs: row.textLayerIsOurs === 1 };
    },

    /** Pages of a range stored so far; never lowers the figure (a range run again starts from 0). */
    async recordPagesReady(jobId: number, pagesReady: number): Promise<void> {
      await db.updateTable("pageRanges").set({ pagesReady }).where("jobId", "=", jobId).where("done", "=", 0).where("pagesReady", "<", pagesReady).execute();
    },

    /**
     * Marks the range of job `jobId` done, once, while `owner` still holds the job (a worker that
     * lost its lease counts for nothing: the new holder will). The last range to be done enqueues
     * the document's CONVERT_DOCUMENT job, which publishes. Covers come with the range of page 1.
     * Answers whether this call counted the range.
     */
    async completeRange(jobId: number, owner: string, covers: { width: number; height: number } | undefined, now: number): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const marked = await trx
          .updateTable("pageRanges")
          .set({ done: 1, pagesReady: sql<number>`last_page - first_page + 1` })
          .where("jobId", "=", jobId)
          .where("done", "=", 0)
          .where(({ exists, selectFrom }) =>
            exists(selectFrom("jobs").select("id").where("id", "=", jobId).where("leaseOwner", "=", owner).where("state", "=", "running")),
          )
          .returning("documentId")
          .executeTakeFirst();
        if (!marked) return false;
        // The split's row is updated by every range as it is done: one at a time, so exactly one sees 0.
        const left = await trx
          .updateTable("pageFanouts")
          .set((eb) => ({ rangesLeft: eb("rangesLeft", "-", 1), ...(covers ? { coverWidth: covers.width, coverHeight: covers.height } : {}) }))
          .where("documentId", "=", marked.documentId)
          .returning("rangesLeft")
          .executeTakeFirstOrThrow();
        if (left.rangesLeft === 0) {
          const job = await trx.selectFrom("jobs").select(["accountId", "requestId"]).where("id", "=", jobId).executeTakeFirstOrThrow();
          await trx
            .insertInto("jobs")
            .values({
              kind: CONVERT_DOCUMENT, documentId: marked.documentId, accountId: job.accountId, state: "queued", attempts: 0, runAt: now,
              leaseUntil: null, leaseOwner: null, lastError: "", createdAt: now, updatedAt: now, requestId: job.requestId,
            })
            .execute();
        }
        return true;
      });
    },

    /** The ranges of a split document, in page order. */
    async ranges(documentId: string): Promise<Array<{ firstPage: number; lastPage: number; done: boolean }>> {
      const rows = await db.selectFrom("pageRanges").select(["firstPage", "lastPage", "done"]).where("documentId", "=", documentId).orderBy("firstPage").execute();
      return rows.map((r) => ({ ...r, done: r.done === 1 }));
    },

    /**
     * How far a split document is: its pages and those stored so far (summed over its ranges).
     * Undefined for a document that is not split (a short one, converted by one job).
     */
    async progress(documentId: string): Promise<{ pageCount: number; pagesReady: number } | undefined> {
      const row = await db
        .selectFrom("pageFanouts as f")
        .leftJoin("pageRanges as r", "r.documentId", "f.documentId")
        .select(["f.pageCount", (eb) => eb.fn.sum<number | string | null>("r.pagesReady").as("ready")])
        .where("f.documentId", "=", documentId)
        .groupBy("f.pageCount")
        .executeTakeFirst();
      if (!row) return undefined;
      return { pageCount: row.pageCount, pagesReady: Math.min(row.pageCount, Number(row.ready ?? 0)) };
    },

    /** Forgets a document's split once it is published (its ranges have nothing more to say). */
    async forget(documentId: string): Promise<void> {
      await db.deleteFrom("pageFanouts").where("documentId", "=", documentId).execute();
    },
  };
}
