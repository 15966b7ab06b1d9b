import { sql, type Kysely } from "kysely";
import type { Phrase, SearchQuery } from "../../domain/search-query.ts";
import type { Database } from "../schema.ts";
import { FIELD_WEIGHTS, matchesOf, scopeFilter, tagsText, type SearchEngine, type SearchHit, type SearchRequest } from "../search-index.ts";

/**
 * SQLite FTS5 (decisions §11). Case and accents are folded by unicode61; words are stemmed by
 * porter, the only stemmer FTS5 has (English rules, whatever the document's language).
 *
 * `search_docs_fts` holds one row per document (title, tags, description and the whole text,
 * contentless: the text is not stored twice), ranked by bm25 per column; `search_pages_fts` one
 * row per page with its text, for the pages that matched and their snippets. A page's rowid is
 * its document's key times PAGE_SLOTS plus its number, so one document's pages are a rowid range.
 */
const TOKENIZE = "porter unicode61 remove_diacritics 2";
/** Above QUIRE_MAX_PAGES's bound (100,000). */
const PAGE_SLOTS = 131_072;

/**
 * The rowid bounds of one document's pages, as SQLite integers. FTS5 seeks to a rowid range only
 * when its bounds are integers; better-sqlite3 binds a JS number as a REAL, and FTS5 then reads
 * every page of the table (at a million pages, 360 ms instead of 3 for one document's pages).
 */
function pageRowids(docKey: number): { first: bigint; end: bigint } {
  const first = BigInt(docKey) * BigInt(PAGE_SLOTS);
  return { first, end: first + BigInt(PAGE_SLOTS) };
}

const quoted = (p: Phrase) => `"${p.join(" ").replace(/"/g, '""')}"`;

/** The query in FTS5's syntax: every part quoted, so FTS5's operators never come from user text. */
export function fts5Query(q: SearchQuery): string {
  const required = q.required.map(quoted).join(" AND ");
  return [`(${required})`, ...q.excluded.map(quoted)].join(" NOT ");
}

/** Any of the required parts: the pages to show when no single page holds them all. */
function fts5AnyQuery(q: SearchQuery): string {
  return q.required.map(quoted).join(" OR ");
}

/** bm25 of one column (FTS5 answers it negated: lower is better), as 0..1, higher better. */
const columnRank = (weights: string) => sql.raw(`(-bm25(search_docs_fts, ${weights}) / (1.0 - bm25(search_docs_fts, ${weights})))`);

const SCORE = sql.join(
  [
    sql`${FIELD_WEIGHTS.title} * ${columnRank("1, 0, 0, 0")}`,
    sql`${FIELD_WEIGHTS.tags} * ${columnRank("0, 1, 0, 0")}`,
    sql`${FIELD_WEIGHTS.description} * ${columnRank("0, 0, 1, 0")}`,
    sql`${FIELD_WEIGHTS.text} * ${columnRank("0, 0, 0, 1")}`,
  ],
  sql` + `,
);

/** Before each matched word in `highlight()`'s copy of a page, to count the matches (text extraction drops control characters; a stray one would only change the order). */
const MARK = "\u0001";

/**
 * The pages of one document that match, best first: those with the most matched words, then in
 * page order. Not FTS5's bm25 (`rank`): it needs how many of the table's rows match the query, so
 * for a phrase of common words each call walked a million pages (260 ms), and within one document
 * and one query it orders pages by much the same thing.
 */
async function pageHits(db: Kysely<Database>, docKey: number, query: string, limit: number): Promise<SearchHit[]> {
  const { first, end } = pageRowids(docKey);
  const inRange = sql`search_pages_fts match ${query} and rowid > ${first} and rowid < ${end}`;
  const marked = await sql<{ page: number; marked: string }>`
    select rowid - ${first} as page, highlight(search_pages_fts, 0, ${MARK}, '') as marked from search_pages_fts where ${inRange}`.execute(db);
  const best = marked.rows
    .map((r) => ({ page: Number(r.page), matches: r.marked.split(MARK).length - 1 }))
    .sort((a, b) => b.matches - a.matches || a.page - b.page)
    .slice(0, limit)
    .map((r) => r.page);
  if (best.length === 0) return [];
  const snippets = await sql<{ page: number; snippet: string }>`
    select rowid - ${first} as page, snippet(search_pages_fts, 0, '[[', ']]', '…', 16) as snippet from search_pages_fts
     where ${inRange} and rowid in (${sql.join(best.map((page) => sql`${first + BigInt(page)}`))})`.execute(db);
  const byPage = new Map(snippets.rows.map((r) => [Number(r.page), r.snippet]));
  return best.map((page) => ({ page, snippet: byPage.get(page) ?? "" }));
}

export const sqliteSearch: SearchEngine = {
  async migrate(db) {
    await sql`create table search_documents (
      doc_key integer primary key autoincrement,
      document_id text not null unique references documents(document_id) on delete cascade)`.execute(db);
    await sql.raw(`create virtual table search_docs_fts using fts5(title, tags, description, body,
      content='', contentless_delete=1, tokenize='${TOKENIZE}')`).execute(db);
    await sql.raw(`create virtual table search_pages_fts using fts5(body, tokenize='${TOKENIZE}')`).execute(db);
    // Whatever removes the document (a delete, its account's removal) removes its entries with it.
    await sql.raw(`create trigger search_documents_delete after delete on search_documents begin
      delete from search_docs_fts where rowid = old.doc_key;
      delete from search_pages_fts where rowid > old.doc_key * ${PAGE_SLOTS} and rowid < (old.doc_key + 1) * ${PAGE_SLOTS};
    end`).execute(db);
  },

  async index(trx, doc, pages) {
    await sql`insert into search_documents (document_id) values (${doc.documentId}) on conflict (document_id) do nothing`.execute(trx);
    const keyed = await sql<{ docKey: number }>`select doc_key from search_documents where document_id = ${doc.documentId}`.execute(trx);
    const docKey = Number(keyed.rows[0]!.docKey);
    const { first, end } = pageRowids(docKey);
    if (pages !== undefined) {
      await sql`delete from search_pages_fts where rowid > ${first} and rowid < ${end}`.execute(trx);
      for (let i = 0; i < pages.length; i++) {
        if (pages[i]) await sql`insert into search_pages_fts (rowid, body) values (${first + BigInt(i + 1)}, ${pages[i]})`.execute(trx);
      }
    }
    // The document row is contentless: rewritten whole, its text read back from the pages.
    await sql`delete from search_docs_fts where rowid = ${docKey}`.execute(trx);
    await sql`insert into search_docs_fts (rowid, title, tags, description, body)
      values (${docKey}, ${doc.title}, ${tagsText(doc.tags)}, ${doc.description},
        coalesce((select group_concat(body, char(10)) from (select body from search_pages_fts
          where rowid > ${first} and rowid < ${end} order by rowid)), ''))`.execute(trx);
  },

  async hasPageText(db, documentId) {
    // The bounds are computed from the integer key, so FTS5 seeks to them (see pageRowids).
    const found = await sql`select 1 from search_documents s where s.document_id = ${documentId} and exists (
      select 1 from search_pages_fts where rowid > s.doc_key * ${sql.raw(String(PAGE_SLOTS))} and rowid < (s.doc_key + 1) * ${sql.raw(String(PAGE_SLOTS))})`.execute(db);
    return found.rows.length > 0;
  },

  async search(db, req: SearchRequest) {
    const match = fts5Query(req.query);
    // FTS5's rank functions run only in a plain scan of their table: ranked first, joined after.
    const matched = sql`with m as materialized (select rowid as k, ${SCORE} as score from search_docs_fts where search_docs_fts match ${match})`;
    const rows = (await sql<Record<string, unknown>>`${matched}
      select d.*, a.username, m.k as search_key, m.score as search_score, count(*) over () as search_total
        from m
        join search_documents s on s.doc_key = m.k
        join documents d on d.document_id = s.document_id
        join accounts a on a.id = d.account_id
       where ${scopeFilter(req.scope)}
       order by m.score desc, d.document_id limit ${Math.max(1, req.pageSize)} offset ${req.startIndex}`.execute(db)).rows;
    let totalCount = rows.length ? Number(rows[0]!.searchTotal) : 0;
    if (rows.length === 0 && req.startIndex > 0) {
      const counted = await sql<{ n: number }>`select count(*) as n from search_docs_fts
        join search_documents s on s.doc_key = search_docs_fts.rowid join documents d on d.document_id = s.document_id
        where search_docs_fts match ${match} and ${scopeFilter(req.scope)}`.execute(db);
      totalCount = Number(counted.rows[0]?.n ?? 0);
    }
    if (req.pageSize === 0) return { totalCount, matches: [] };
    const all = fts5Query({ required: req.query.required, excluded: [] });
    const matches = await matchesOf(rows, req.query.required.length > 1, (key, anyWord) =>
      pageHits(db, key, anyWord ? fts5AnyQuery(req.query) : all, req.maxHits),
    );
    return { totalCount, matches };
  },
};
