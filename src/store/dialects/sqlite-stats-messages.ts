import type { StatBatch } from "../stat-batch.ts";

/** What the server sends the statistics writer process over IPC (sqlite-stats-writer.ts → sqlite-stats-worker.ts). */
export interface StatsTask {
  id: number;
  /** Copied over IPC (advanced serialization): the counter keeps the batch until it is written. */
  events: StatBatch;
  /** Given: also delete what is kept only for its day (readers, salts) from days before this one (epoch ms). */
  sweepBefore?: number;
}

/** What the writer answers: how many events counted, or why the batch was not written. */
export type StatsAnswer =
  | { id: number; ok: true; counted: number }
  | { id: number; ok: false; message: string; code?: string };
