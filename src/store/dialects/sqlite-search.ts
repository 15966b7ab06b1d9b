import { sql, type Kysely } from "kysely";
import type { Phrase, SearchQuery } from "../../domain/search-query.ts";
import type { Database } from "../schema.ts";
import { FIELD_WEIGHTS, matchesOf, scopeFilter, tagsText, type RankedKey, type SearchEngine, type SearchHit, type SearchRequest, windowRows } from "../search-index.ts";
import { pageSnippet } from "../search-snippet.ts";
import { FTS5_TOKENIZE, fts5Tokens } from "./sqlite-tokens.ts";

/**
 * SQLite FTS5 (decisions §11). Case and accents are folded by unicode61; words are stemmed by
 * porter, the only stemmer FTS5 has (English rules, whatever the document's language).
 *
 * Three FTS5 tables, each for one question:
 * - `search_terms_fts`, which documents match: one contentless row per document, `detail=none`,
 *   holding every token of its title, tags, description and text (FTS5_TOKENIZE's, made by
 *   `fts5Tokens`) and every pair of neighbouring tokens as one term (`a_b`). A word is its
 *   token, a phrase its pairs: a document list per term without positions, so a word in every
 *   document, or a phrase of two such words, is read as quickly as a rare one. (With positions,
 *   a phrase of two common words was checked against every document's position lists: 214 ms at
 *   10,000 documents of 100 pages.)
 * - `search_meta_fts`, how well: the title, tags and description with positions, ranked by bm25
 *   per column. The text is not ranked (bm25 over the text of every document holding a common
 *   word cost 40 ms per column at that size): documents found by their text alone tie, ordered
 *   by documentId, as on PostgreSQL.
 * - `search_pages_fts`, where: one row per page with its text, for the pages that matched, their
 *   snippets, and the check of a phrase of three or more words, whose pairs may each be found
 *   without the whole phrase. A page's rowid is its document's key times PAGE_SLOTS plus its
 *   number, so one document's pages are a rowid range.
 */

/** Above QUIRE_MAX_PAGES's bound (100,000). */
const PAGE_SLOTS = 131_072;
/** The terms index reads tokens already made; `_` joins a pair's two tokens into one term (no token holds one). */
const TERMS_TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '_'";

/**
 * The rowid bounds of one document's pages, as SQLite integers. FTS5 seeks to a rowid range only
 * when its bounds are integers; better-sqlite3 binds a JS number as a REAL, and FTS5 then reads
 * every page of the table (at a million pages, 360 ms instead of 3 for one document's pages).
 */
function pageRowids(docKey: number): { first: bigint; end: bigint } {
  const first = BigInt(docKey) * BigInt(PAGE_SLOTS);
  return { first, end: first + BigInt(PAGE_SLOTS) };
}

/** The same bounds for the key in a column: integer arithmetic, so FTS5 seeks to them too. */
const pagesOfKey = (key: string) => sql.raw(`rowid > ${key} * ${PAGE_SLOTS} and rowid < (${key} + 1) * ${PAGE_SLOTS}`);

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
const quoted = (p: Phrase) => quote(p.join(" "));

/** Every token of each sequence, and every pair of neighbours in it, once. */
export function termsOf(sequences: readonly (readonly string[])[]): string {
  const terms = new Set<string>();
  for (const tokens of sequences) {
    for (let i = 0; i < tokens.length; i++) {
      terms.add(tokens[i]!);
      if (i + 1 < tokens.length) terms.add(`${tokens[i]}_${tokens[i + 1]}`);
    }
  }
  return [...terms].join(" ");
}

/** A part of the query as terms: its token, or its pairs. Undefined when it has no token FTS5 keeps. */
function partTerms(tokens: readonly string[]): string | undefined {
  if (tokens.length === 0) return undefined;
  if (tokens.length === 1) return quote(tokens[0]!);
  const pairs = tokens.slice(1).map((t, i) => quote(`${tokens[i]}_${t}`));
  return `(${pairs.join(" AND ")})`;
}

interface TermsQuery {
  /** FTS5 query on `search_terms_fts`; undefined when a required part can match nothing. */
  match: string | undefined;
  /** Phrases of three or more tokens, whose pairs only suggest them: checked whole afterwards. */
  requiredLong: Phrase[];
  excludedLong: Phrase[];
}

/** The query in terms: every part quoted, so FTS5's operators never come from user text. */
export function termsQuery(q: SearchQuery): TermsQuery {
  const tokens = fts5Tokens([...q.required, ...q.excluded].map((p) => p.join(" ")));
  const required = tokens.slice(0, q.required.length);
  const excluded = tokens.slice(q.required.length);
  const requiredTerms = required.map(partTerms);
  if (requiredTerms.some((t) => t === undefined)) return { match: undefined, requiredLong: [], excludedLong: [] };
  // A long excluded phrase is excluded by its exact check only: its pairs would exclude documents without it.
  const excludedTerms = excluded.flatMap((t) => (t.length > 2 ? [] : [partTerms(t)].filter((x) => x !== undefined)));
  return {
    match: [`(${requiredTerms.join(" AND ")})`, ...excludedTerms].join(" NOT "),
    requiredLong: q.required.filter((_, i) => required[i]!.length > 2),
    excludedLong: q.excluded.filter((_, i) => excluded[i]!.length > 2),
  };
}

/** Any of the parts, for the title, tags and description's rank and for pages when none holds every part. */
const anyQuery = (parts: readonly Phrase[]) => parts.map(quoted).join(" OR ");
const allQuery = (parts: readonly Phrase[]) => parts.map(quoted).join(" AND ");

/** Whether the document of key `m.k` holds the phrase itself, in one field or one page. */
function phraseFound(p: Phrase) {
  return sql`(exists (select 1 from search_meta_fts where search_meta_fts match ${quoted(p)} and rowid = m.k)
    or exists (select 1 from search_pages_fts where search_pages_fts match ${quoted(p)} and ${pagesOfKey("m.k")}))`;
}

/** bm25 of one column (FTS5 answers it negated: lower is better), as 0..1, higher better. */
const columnRank = (weights: string) => sql.raw(`(-bm25(search_meta_fts, ${weights}) / (1.0 - bm25(search_meta_fts, ${weights})))`);

const SCORE = sql.join(
  [
    sql`${FIELD_WEIGHTS.title} * ${columnRank("1, 0, 0")}`,
    sql`${FIELD_WEIGHTS.tags} * ${columnRank("0, 1, 0")}`,
    sql`${FIELD_WEIGHTS.description} * ${columnRank("0, 0, 1")}`,
  ],
  sql` + `,
);

/** Around each match in `highlight()`'s copy of a page (text extraction drops control characters; a stray one would only change a snippet). */
const OPEN = "\u0001";
const CLOSE = "\u0002";
/**
 * The matching pages of a document examined for its hits, in page order. Highlighting a page
 * re-reads its text; a word on every page of 10 result documents of 100 pages each would read
 * 1,000 pages for the 50 shown.
 */
const PAGES_EXAMINED = 25;

/**
 * The pages of one document that match, best first: those with the most matches, then in page
 * order, among its first PAGES_EXAMINED matching pages. Not FTS5's bm25 (`rank`): it needs how
 * many of the table's rows match the query, so for a phrase of common words each call walked a
 * million pages (260 ms).
 */
async function pageHits(db: Kysely<Database>, docKey: number, query: string, limit: number): Promise<SearchHit[]> {
  const { first, end } = pageRowids(docKey);
  const marked = await sql<{ page: number; marked: string }>`
    select rowid - ${first} as page, highlight(search_pages_fts, 0, ${OPEN}, ${CLOSE}) as marked from search_pages_fts
     where search_pages_fts match ${query} and rowid > ${first} and rowid < ${end} order by rowid limit ${PAGES_EXAMINED}`.execute(db);
  return marked.rows
    .map((r) => ({ page: Number(r.page), marked: r.marked, matches: r.marked.split(OPEN).length - 1 }))
    .sort((a, b) => b.matches - a.matches || a.page - b.page)
    .slice(0, limit)
    .map((r) => ({ page: r.page, snippet: pageSnippet(r.marked, OPEN, CLOSE) }));
}

/** The tokens of a document's fields and text, as `termsOf` reads them: a tag's words never run into the next tag's. */
function documentTokens(doc: { title: string; tags: string; description: string }, pages: readonly string[]): string[][] {
  const tags = JSON.parse(doc.tags) as string[];
  const tokens = fts5Tokens([doc.title, doc.description, ...tags, ...pages]);
  return [...tokens.slice(0, 2 + tags.length), tokens.slice(2 + tags.length).flat()];
}

async function createTables(db: Kysely<Database>): Promise<void> {
  await sql.raw(`create virtual table search_meta_fts using fts5(title, tags, description,
    content='', contentless_delete=1, tokenize='${FTS5_TOKENIZE}')`).execute(db);
  await sql.raw(`create virtual table search_terms_fts using fts5(terms,
    content='', contentless_delete=1, detail=none, tokenize="${TERMS_TOKENIZE}")`).execute(db);
  // Whatever removes the document (a delete, its account's removal) removes its entries with it.
  await sql.raw(`create trigger search_documents_delete after delete on search_documents begin
    delete from search_meta_fts where rowid = old.doc_key;
    delete from search_terms_fts where rowid = old.doc_key;
    delete from search_pages_fts where rowid > old.doc_key * ${PAGE_SLOTS} and rowid < (old.doc_key + 1) * ${PAGE_SLOTS};
  end`).execute(db);
}

/** Writes a document's meta and terms rows (contentless: rewritten whole) from its fields and page texts. */
async function writeDocumentRows(db: Kysely<Database>, docKey: number, doc: { title: string; tags: string; description: string }, pages: readonly string[]) {
  await sql`delete from search_meta_fts where rowid = ${docKey}`.execute(db);
  await sql`insert into search_meta_fts (rowid, title, tags, description)
    values (${docKey}, ${doc.title}, ${tagsText(doc.tags)}, ${doc.description})`.execute(db);
  await sql`delete from search_terms_fts where rowid = ${docKey}`.execute(db);
  await sql`insert into search_terms_fts (rowid, terms) values (${docKey}, ${termsOf(documentTokens(doc, pages))})`.execute(db);
}

async function storedPages(db: Kysely<Database>, docKey: number): Promise<string[]> {
  const { first, end } = pageRowids(docKey);
  const rows = await sql<{ body: string }>`select body from search_pages_fts where rowid > ${first} and rowid < ${end} order by rowid`.execute(db);
  return rows.rows.map((r) => r.body);
}

export const sqliteSearch: SearchEngine = {
  async migrate(db) {
    await sql`create table search_documents (
      doc_key integer primary key autoincrement,
      document_id text not null unique references documents(document_id) on delete cascade)`.execute(db);
    await sql.raw(`create virtual table search_pages_fts using fts5(body, tokenize='${FTS5_TOKENIZE}')`).execute(db);
    await createTables(db);
  },

  async upgrade(db) {
    // Before 0012 one table, search_docs_fts, held each document's fields and text with positions.
    const old = await sql`select 1 from sqlite_master where name = 'search_docs_fts'`.execute(db);
    if (old.rows.length === 0) return;
    await sql`drop trigger search_documents_delete`.execute(db);
    await sql`drop table search_docs_fts`.execute(db);
    await createTables(db);
    const docs = await sql<{ docKey: number; title: string; tags: string; description: string }>`
      select s.doc_key, d.title, d.tags, d.description from search_documents s join documents d on d.document_id = s.document_id
       order by s.doc_key`.execute(db);
    for (const doc of docs.rows) await writeDocumentRows(db, Number(doc.docKey), doc, await storedPages(db, Number(doc.docKey)));
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
    await writeDocumentRows(trx, docKey, doc, pages ?? (await storedPages(trx, docKey)));
  },

  async hasPageText(db, documentId) {
    const found = await sql`select 1 from search_documents m where m.document_id = ${documentId} and exists (
      select 1 from search_pages_fts where ${pagesOfKey("m.doc_key")})`.execute(db);
    return found.rows.length > 0;
  },

  async search(db, req: SearchRequest) {
    const terms = termsQuery(req.query);
    if (terms.match === undefined) return { totalCount: 0, matches: [] };
    const checks = [...terms.requiredLong.map(phraseFound), ...terms.excludedLong.map((p) => sql`not ${phraseFound(p)}`)];
    const checked = checks.length ? sql` and ${sql.join(checks, sql` and `)}` : sql``;
    // FTS5's rank functions run only in a plain scan of their table: ranked first, joined after.
    const found = sql`with m as materialized (select rowid as k from search_terms_fts where search_terms_fts match ${terms.match}),
      r as materialized (select rowid as k, ${SCORE} as score from search_meta_fts where search_meta_fts match ${anyQuery(req.query.required)})
      select m.k, d.document_id, coalesce(r.score, 0) as score
        from m
        join search_documents s on s.doc_key = m.k
        join documents d on d.document_id = s.document_id
        left join r on r.k = m.k
       where ${scopeFilter(req.scope)}${checked}`;
    // The window first, on keys alone; the documents' rows only for it.
    const window = (await sql<RankedKey & { total: number }>`
      select f.k, f.document_id, f.score, count(*) over () as total from (${found}) f
       order by f.score desc, f.document_id limit ${Math.max(1, req.pageSize)} offset ${req.startIndex}`.execute(db)).rows;
    let totalCount = window.length ? Number(window[0]!.total) : 0;
    if (window.length === 0 && req.startIndex > 0) {
      totalCount = Number((await sql<{ n: number }>`select count(*) as n from (${found}) f`.execute(db)).rows[0]?.n ?? 0);
    }
    if (req.pageSize === 0 || window.length === 0) return { totalCount, matches: [] };
    const rows = await windowRows(db, window);
    const matches = await matchesOf(rows, req.query.required.length > 1, (key, anyWord) =>
      pageHits(db, key, anyWord ? anyQuery(req.query.required) : allQuery(req.query.required), req.maxHits),
    );
    return { totalCount, matches };
  },
};
