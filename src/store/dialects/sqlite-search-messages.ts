import type { SearchMatch, SearchRequest } from "../search-index.ts";

/** What the event loop sends a search thread (sqlite-search-pool.ts → sqlite-search-worker.ts). */
export interface SearchTask {
  id: number;
  req: SearchRequest;
}

/** What a search thread answers. */
export type SearchAnswer =
  | { id: number; ok: true; result: { totalCount: number; matches: SearchMatch[] } }
  | { id: number; ok: false; message: string; code?: string };
