import { sql, type Kysely, type RawBuilder } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import { isSearchable, type SearchQuery } from "../domain/search-query.ts";
import { fromRow } from "./document-rows.ts";
import type { Database } from "./schema.ts";
import { DEFAULT_SEARCH_LIMITS, SearchGate } from "./search-gate.ts";

/**
 * The full-text index of documents (decisions §11): one entry per document (title, tags,
 * description and the whole text, for matching and ranking) and one per page (for the pages
 * that matched and their snippets), kept by each database's own engine (`dialects/*-search.ts`).
 * Every change is made with the transaction that changes the document, so a document is
 * findable the moment it is `A`; a deleted document's entries go by cascade in the same statement.
 */

/** Whose documents a search covers. */
export type SearchScope =
  /** `svc.documents.search`: the caller's own documents, any access, in these states. */
  | { kind: "account"; accountId: number; access?: string; states: readonly string[] }
  /** The public site: active public documents, of every account or of one. */
  | { kind: "public"; accountId?: number };

/**
 * The documents a scope may see, as a condition on the index's own row `s` (search_documents),
 * which holds each document's account, state and access: a trigger on documents
 * (`search_documents_scope`) keeps the last two in the statement that changes them, so a
 * document made private or deleted leaves public search at once, and no search reads the
 * documents table for its matches.
 */
export function scopeFilter(scope: SearchScope): RawBuilder<unknown> {
  if (scope.kind === "public") {
    const account = scope.accountId === undefined ? sql`` : sql` and s.account_id = ${scope.accountId}`;
    return sql`s.access = 'public' and s.state = 'A'${account}`;
  }
  const access = scope.access === undefined ? sql`` : sql` and s.access = ${scope.access}`;
  const states = scope.states.length ? sql` and s.state in (${sql.join(scope.states.map((st) => sql`${st}`))})` : sql``;
  return sql`s.account_id = ${scope.accountId}${access}${states}`;
}

export interface SearchRequest {
  query: SearchQuery;
  scope: SearchScope;
  startIndex: number;
  /** 0 counts only. */
  pageSize: number;
  /** Pages answered per document, at most. */
  maxHits: number;
}

export interface SearchHit {
  page: number;
  /** A few words around the match, the matched words between `[[` and `]]`. */
  snippet: string;
}

export interface SearchMatch {
  record: DocumentRecord;
  score: number;
  hits: SearchHit[];
}

/**
 * The matching pages of a document examined for its hits, in page order; the best of them are
 * answered. Marking a page for its snippet reads it again: a word on every page of 10 result
 * documents of 100 pages would otherwise mark 1,000 pages for the 50 shown.
 */
export const PAGES_EXAMINED = 12;

/** One result window's documents, best first: their keys in the index and scores. */
export interface RankedKey {
  k: number;
  documentId: string;
  score: number;
}

/**
 * The documents' rows (with their owners' usernames) of one result window, in its order, as
 * `matchesOf` reads them. Each engine ranks and windows keys alone, then reads only these rows:
 * sorting whole rows of every match cost more than the match itself for a common word.
 */
export async function windowRows(db: Kysely<Database>, window: readonly RankedKey[]): Promise<Array<Record<string, unknown>>> {
  if (window.length === 0) return [];
  const records = await sql<Record<string, unknown>>`
    select d.*, a.username from documents d join accounts a on a.id = d.account_id
     where d.document_id in (${sql.join(window.map((w) => sql`${w.documentId}`))})`.execute(db);
  const byId = new Map(records.rows.map((r) => [r.documentId as string, r]));
  // A document deleted since the window was read is left out of it.
  return window.flatMap((w) => {
    const record = byId.get(w.documentId);
    return record ? [{ ...record, searchKey: w.k, searchScore: w.score }] : [];
  });
}

/** The pages of each of these documents that match a query (`anyWord`: any of its parts, else all), best first. */
export type PageHitsOf = (keys: readonly number[], anyWord: boolean) => Promise<Map<number, SearchHit[]>>;

/**
 * One result page's rows (a document's columns, its entry's key and score) as matches, each with
 * the pages that hold every word, or, when none does and there are several words, the pages that
 * hold any of them (decisions §11). `pageHits` is the engine's own page query, asked for the
 * whole window at once.
 */
export async function matchesOf(rows: ReadonlyArray<Record<string, unknown>>, severalWords: boolean, pageHits: PageHitsOf): Promise<SearchMatch[]> {
  const keys = rows.map((r) => Number(r.searchKey));
  const hits = await pageHits(keys, false);
  const without = keys.filter((k) => !hits.get(k)?.length);
  if (without.length && severalWords) for (const [k, found] of await pageHits(without, true)) hits.set(k, found);
  return rows.map(({ searchKey, searchScore, ...record }) => ({
    record: fromRow(record as Parameters<typeof fromRow>[0]),
    score: Number(searchScore),
    hits: hits.get(Number(searchKey)) ?? [],
  }));
}

/** What one engine (SQLite FTS5, PostgreSQL text search) does; everything else is written once, here. */
export interface SearchEngine {
  /** Creates the engine's tables as they are now (migration 0007). */
  migrate(db: Kysely<Database>): Promise<void>;
  /** Brings tables an earlier version created to what `migrate` creates now (migration 0012); nothing when they are. */
  upgrade(db: Kysely<Database>): Promise<void>;
  /**
   * Writes a document's entry from its row as it is now in `trx`: the whole entry when `pages`
   * (page n's text at index n - 1) is given, else its title, tags and description only, the page
   * texts kept as they are.
   */
  index(trx: Kysely<Database>, doc: IndexedFields, pages: readonly string[] | undefined): Promise<void>;
  /** One window of the matching documents, best first (ties by documentId), and how many match. */
  search(db: Kysely<Database>, req: SearchRequest): Promise<{ totalCount: number; matches: SearchMatch[] }>;
  /** Whether any page text of the document is in the index. */
  hasPageText(db: Kysely<Database>, documentId: string): Promise<boolean>;
}

/** The fields of a document the index holds (besides its text). */
export interface IndexedFields {
  documentId: string;
  /** Whose, and who may find it: kept in the index's row so a search never reads the documents table for its matches. */
  accountId: number;
  state: string;
  access: string;
  title: string;
  description: string;
  /** JSON list, as the documents table keeps it. */
  tags: string;
  language: string;
}

/**
 * Tags as indexed text, a private-use character between two tags: FTS5 reads it as a word of its
 * own (punctuation it skips), which no word of a query holds (`wordsOf`), so a phrase never runs
 * from one tag into the next. PostgreSQL's parser skips it: its phrases are checked per tag
 * (postgres-search.ts).
 */
export function tagsText(tagsJson: string): string {
  return (JSON.parse(tagsJson) as string[]).join(" \uE000 ");
}

/**
 * The score of decisions §11 from per-field ranks, each 0..1: any title match outranks any match
 * elsewhere, tags and description come next, the text last.
 */
export const FIELD_WEIGHTS = { title: 100, tags: 10, description: 10, text: 1 } as const;

/**
 * `run`: how a search is run, bounded by `gate` (the dialect's threads, sqlite-search-pool.ts);
 * without it, on `db` here behind `gate` (PostgreSQL, whose driver does not hold the event loop).
 */
export function searchIndex(db: Kysely<Database>, engine: SearchEngine, run?: (req: SearchRequest) => Promise<{ totalCount: number; matches: SearchMatch[] }>,
  gate = new SearchGate(DEFAULT_SEARCH_LIMITS)) {
  /** Re-reads the row in `trx`, so what is indexed is what was just written. */
  const indexFromRow = async (trx: Kysely<Database>, documentId: string, pages: readonly string[] | undefined) => {
    const row = await trx
      .selectFrom("documents")
      .select(["documentId", "accountId", "state", "access", "title", "description", "tags", "language"])
      .where("documentId", "=", documentId)
      .executeTakeFirst();
    if (row) await engine.index(trx, row, pages);
  };
  return {
    /** The whole entry of a document that has just become `A`, in the transaction that made it so. */
    indexPublished: (trx: Kysely<Database>, documentId: string, pages: readonly string[]) => indexFromRow(trx, documentId, pages),
    /** Title, tags, description and language after a change (or a new record, without text yet). */
    indexFields: (trx: Kysely<Database>, documentId: string) => indexFromRow(trx, documentId, undefined),
    hasPageText: (trx: Kysely<Database>, documentId: string) => engine.hasPageText(trx, documentId),
    /** Searches running and waiting now. */
    load: () => gate.load(),
    async search(req: SearchRequest): Promise<{ totalCount: number; matches: SearchMatch[] }> {
      if (!isSearchable(req.query)) return { totalCount: 0, matches: [] };
      return run ? run(req) : gate.run(() => engine.search(db, req));
    },
  };
}
