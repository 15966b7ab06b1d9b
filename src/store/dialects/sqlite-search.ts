import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Phrase, SearchQuery } from "../../domain/search-query.ts";
import { indexTerms, phrasePairs, phraseWords } from "../../domain/word-pairs.ts";
import type { Database } from "../schema.ts";
import {
  FIELD_WEIGHTS, matchesOf, PAGES_EXAMINED, scopeFilter, tagsText, type IndexedFields, type RankedKey, type SearchEngine, type SearchHit, type SearchRequest, windowRows,
} from "../search-index.ts";
import { MARK_CLOSE, MARK_OPEN, pageSnippet } from "../search-snippet.ts";

/**
 * SQLite FTS5 (decisions §11). Words are stemmed by porter, the only stemmer FTS5 has (English
 * rules, whatever the document's language).
 *
 * `search_documents` maps each document to its key, with its account, state and access (kept by
 * the trigger `search_documents_scope`). Four FTS5 tables, each for one question:
 * - `search_words_fts`, which documents hold a word: one contentless row per document,
 *   `detail=none`, the distinct words (`indexTerms`) of its title, tags, description and
 *   text; a word's document list has no positions, so a word in every document is read as
 *   quickly as a rare one.
 * - `search_pairs_fts`, which documents hold a phrase: the same for its pairs of neighbouring
 *   words (`indexTerms`), each one term (`storm_front`). With positions, a phrase of two common
 *   words was checked against every document's position lists: 214 ms at 10,000 documents of
 *   100 pages. A phrase of three or more words is then checked whole in the two tables below,
 *   since its pairs may each be found without it.
 * - `search_meta_fts`, how well: the title, tags and description with positions, ranked by bm25
 *   per column. The text is not ranked (bm25 over the text of every document holding a common
 *   word cost 40 ms per column at that size): documents found by their text alone tie, ordered
 *   by documentId, as on PostgreSQL.
 * - `search_pages_fts`, where: one row per page with its text, for the pages that matched and
 *   their snippets. A page's rowid is its document's key times PAGE_SLOTS plus its number, so one
 *   document's pages are a rowid range.
 *
 * The words and pairs tables read terms already folded here (`word-pairs.ts`), so one word is
 * always one term, whatever FTS5's own tables would make of it: their `ascii` tokenizer only
 * splits at spaces (a folded word holds no other ASCII character than letters and digits).
 */
const TOKENIZE = "porter unicode61 remove_diacritics 2";
const WORDS_TOKENIZE = "porter ascii";
const PAIRS_TOKENIZE = "ascii tokenchars '_'";

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

/** The same bounds for the key in a column: integer arithmetic, so FTS5 seeks to them too. */
const pagesOfKey = (key: string) => sql.raw(`rowid > ${key} * ${PAGE_SLOTS} and rowid < (${key} + 1) * ${PAGE_SLOTS}`);

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
const quoted = (p: Phrase) => quote(p.join(" "));
/** A word of the query as the words table holds it (folded here, stemmed by its tokenizer). */
const wordTerm = (p: Phrase) => quote(phraseWords(p)[0]!);
/** How many words the index reads in a part of the query: 1 is a word, 2 a phrase its one pair decides. */
const size = (p: Phrase) => phraseWords(p).length;
const pairTerms = (phrases: readonly Phrase[]) => [...new Set(phrases.flatMap((p) => phrasePairs(p)))].map(quote);

/**
 * The documents in scope holding every required part and no excluded one, as the document list
 * of the first required set (`first`: a words or pairs table and its query) and conditions on
 * `s`, the document's row in search_documents: its scope, and its key in or out of the other
 * sets. The words and pairs tables alone decide; every part reaches FTS5 quoted, so its
 * operators never come from user text.
 */
function matching(req: SearchRequest): { first: RawBuilder<unknown>; where: RawBuilder<unknown> } {
  const q = req.query;
  const words = q.required.filter((p) => size(p) === 1);
  const phrases = q.required.filter((p) => size(p) > 1);
  const held: RawBuilder<unknown>[] = [];
  if (words.length) held.push(sql`search_words_fts(${words.map(wordTerm).join(" AND ")})`);
  if (phrases.length) held.push(sql`search_pairs_fts(${pairTerms(phrases).join(" AND ")})`);
  const [first, ...others] = held;
  const conditions = others.map((set) => sql` and s.doc_key in (select rowid from ${set})`);
  const exWords = q.excluded.filter((p) => size(p) === 1);
  if (exWords.length) conditions.push(sql` and s.doc_key not in (select rowid from search_words_fts(${exWords.map(wordTerm).join(" OR ")}))`);
  // A pair decides a phrase of two words; a longer one is excluded by its whole check (see longPhraseChecks).
  const exPairs = q.excluded.filter((p) => size(p) === 2);
  if (exPairs.length) conditions.push(sql` and s.doc_key not in (select rowid from search_pairs_fts(${pairTerms(exPairs).join(" OR ")}))`);
  return { first: first!, where: sql`${scopeFilter(req.scope)}${sql.join(conditions, sql``)}${longPhraseChecks(q)}` };
}

/** Whether the document of key `s.doc_key` holds the phrase in one field or one page, as FTS5 reads it. */
function phraseFound(p: Phrase): RawBuilder<unknown> {
  return sql`(exists (select 1 from search_meta_fts where search_meta_fts match ${quoted(p)} and rowid = s.doc_key)
    or exists (select 1 from search_pages_fts where search_pages_fts match ${quoted(p)} and ${pagesOfKey("s.doc_key")}))`;
}

/**
 * Phrases of three or more words, whose pairs only suggest them: a required one must be found
 * whole; an excluded one removes a document that holds its pairs and the whole phrase.
 */
function longPhraseChecks(q: SearchQuery): RawBuilder<unknown> {
  const checks = [
    ...q.required.filter((p) => size(p) > 2).map(phraseFound),
    ...q.excluded.filter((p) => size(p) > 2).map((p) => sql`not (s.doc_key in (
      select rowid from search_pairs_fts where search_pairs_fts match ${pairTerms([p]).join(" AND ")}) and ${phraseFound(p)})`),
  ];
  return checks.length ? sql` and ${sql.join(checks, sql` and `)}` : sql``;
}

/** Any of the parts, for the title, tags and description's rank and for pages when none holds every part. */
const anyQuery = (parts: readonly Phrase[]) => parts.map(quoted).join(" OR ");
const allQuery = (parts: readonly Phrase[]) => parts.map(quoted).join(" AND ");

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

/**
 * The pages of one document that match, best first: those with the most matches, then in page
 * order, among its first PAGES_EXAMINED matching pages. Not FTS5's bm25 (`rank`): it needs how
 * many of the table's rows match the query, so for a phrase of common words each call walked a
 * million pages (260 ms).
 */
async function pageHits(db: Kysely<Database>, docKey: number, query: string, limit: number): Promise<SearchHit[]> {
  const { first, end } = pageRowids(docKey);
  const marked = await sql<{ page: number; marked: string }>`
    select rowid - ${first} as page, highlight(search_pages_fts, 0, ${MARK_OPEN}, ${MARK_CLOSE}) as marked from search_pages_fts
     where search_pages_fts match ${query} and rowid > ${first} and rowid < ${end} order by rowid limit ${PAGES_EXAMINED}`.execute(db);
  return marked.rows
    .map((r) => ({ page: Number(r.page), marked: r.marked, matches: r.marked.split(MARK_OPEN).length - 1 }))
    .sort((a, b) => b.matches - a.matches || a.page - b.page)
    .slice(0, limit)
    .map((r) => ({ page: r.page, snippet: pageSnippet(r.marked, MARK_OPEN, MARK_CLOSE) }));
}

/** The tables 0012 made (the pages table is 0007's): see the comment at the top. */
async function createTables(db: Kysely<Database>): Promise<void> {
  await sql.raw(`create virtual table search_words_fts using fts5(words,
    content='', contentless_delete=1, detail=none, tokenize='${WORDS_TOKENIZE}')`).execute(db);
  await sql.raw(`create virtual table search_pairs_fts using fts5(pairs,
    content='', contentless_delete=1, detail=none, tokenize="${PAIRS_TOKENIZE}")`).execute(db);
  await sql.raw(`create virtual table search_meta_fts using fts5(title, tags, description,
    content='', contentless_delete=1, tokenize='${TOKENIZE}')`).execute(db);
  // Whatever removes the document (a delete, its account's removal) removes its entries with it.
  await sql.raw(`create trigger search_documents_delete after delete on search_documents begin
    delete from search_words_fts where rowid = old.doc_key;
    delete from search_pairs_fts where rowid = old.doc_key;
    delete from search_meta_fts where rowid = old.doc_key;
    delete from search_pages_fts where rowid > old.doc_key * ${PAGE_SLOTS} and rowid < (old.doc_key + 1) * ${PAGE_SLOTS};
  end`).execute(db);
  // A document's state and access, as its searches read them, change in the statement that changes them.
  await sql.raw(`create trigger search_documents_scope after update of state, access on documents
    when old.state is not new.state or old.access is not new.access begin
    update search_documents set state = new.state, access = new.access where document_id = new.document_id;
  end`).execute(db);
}

/** Writes a document's words, pairs and meta rows (contentless: rewritten whole) from its fields and page texts. */
async function writeDocumentRows(db: Kysely<Database>, docKey: number, doc: Pick<IndexedFields, "title" | "tags" | "description">, pages: readonly string[]) {
  const tags = JSON.parse(doc.tags) as string[];
  const { words, pairs } = indexTerms([doc.title, doc.description, ...tags, ...pages]);
  await sql`delete from search_words_fts where rowid = ${docKey}`.execute(db);
  await sql`insert into search_words_fts (rowid, words) values (${docKey}, ${words.join(" ")})`.execute(db);
  await sql`delete from search_pairs_fts where rowid = ${docKey}`.execute(db);
  await sql`insert into search_pairs_fts (rowid, pairs) values (${docKey}, ${pairs.join(" ")})`.execute(db);
  await sql`delete from search_meta_fts where rowid = ${docKey}`.execute(db);
  await sql`insert into search_meta_fts (rowid, title, tags, description)
    values (${docKey}, ${doc.title}, ${tagsText(doc.tags)}, ${doc.description})`.execute(db);
}

async function storedPages(db: Kysely<Database>, docKey: number): Promise<string[]> {
  const { first, end } = pageRowids(docKey);
  const rows = await sql<{ body: string }>`select body from search_pages_fts where rowid > ${first} and rowid < ${end} order by rowid`.execute(db);
  return rows.rows.map((r) => r.body);
}

/** The documents whose title, tags or description hold a part of the query, with their score (FTS5's rank functions run only in a plain scan of their table). */
const titled = (req: SearchRequest) => sql`select rowid as k, ${SCORE} as score from search_meta_fts(${anyQuery(req.query.required)})`;

/** One window of the matches, best first: every match scored (0 when its title, tags and description hold no part), then sorted. */
async function rankedWindow(db: Kysely<Database>, req: SearchRequest, first: RawBuilder<unknown>, where: RawBuilder<unknown>): Promise<RankedKey[]> {
  return (await sql<RankedKey>`with r as materialized (${titled(req)})
    select s.doc_key as k, s.document_id, coalesce(r.score, 0) as score
      from ${first} f join search_documents s on s.doc_key = f.rowid left join r on r.k = s.doc_key
     where ${where} order by score desc, s.document_id limit ${req.pageSize} offset ${req.startIndex}`.execute(db)).rows;
}

export const sqliteSearch: SearchEngine = {
  async migrate(db) {
    await sql`create table search_documents (
      doc_key integer primary key autoincrement,
      document_id text not null unique references documents(document_id) on delete cascade,
      account_id integer not null,
      state text not null,
      access text not null)`.execute(db);
    await sql.raw(`create virtual table search_pages_fts using fts5(body, tokenize='${TOKENIZE}')`).execute(db);
    await createTables(db);
  },

  async upgrade(db) {
    // Before 0012 one table, search_docs_fts, held each document's fields and text with positions.
    const old = await sql`select 1 from sqlite_master where name = 'search_docs_fts'`.execute(db);
    if (old.rows.length === 0) return;
    // One transaction: Kysely runs SQLite's migrations without one, and a rebuild cut short would
    // leave the old table gone and the migration recorded as run on the next start.
    const rebuild = async (trx: Kysely<Database>) => {
      await sql`drop trigger search_documents_delete`.execute(trx);
      await sql`drop table search_docs_fts`.execute(trx);
      for (const column of ["account_id integer not null default 0", "state text not null default ''", "access text not null default ''"]) {
        await sql.raw(`alter table search_documents add column ${column}`).execute(trx);
      }
      await sql`update search_documents set (account_id, state, access) =
        (select d.account_id, d.state, d.access from documents d where d.document_id = search_documents.document_id)`.execute(trx);
      await createTables(trx);
      const docs = await sql<{ docKey: number; title: string; tags: string; description: string }>`
        select s.doc_key, d.title, d.tags, d.description from search_documents s join documents d on d.document_id = s.document_id
         order by s.doc_key`.execute(trx);
      for (const doc of docs.rows) await writeDocumentRows(trx, Number(doc.docKey), doc, await storedPages(trx, Number(doc.docKey)));
    };
    await (db.isTransaction ? rebuild(db) : db.transaction().execute(rebuild));
  },

  async index(trx, doc, pages) {
    await sql`insert into search_documents (document_id, account_id, state, access) values (${doc.documentId}, ${doc.accountId}, ${doc.state}, ${doc.access})
      on conflict (document_id) do update set state = excluded.state, access = excluded.access`.execute(trx);
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
    const found = await sql`select 1 from search_documents s where s.document_id = ${documentId} and exists (
      select 1 from search_pages_fts where ${pagesOfKey("s.doc_key")})`.execute(db);
    return found.rows.length > 0;
  },

  async search(db, req: SearchRequest) {
    const { first, where } = matching(req);
    // Counted apart: a window function over every match cost more than finding them (15 ms for a common word).
    const totalCount = Number((await sql<{ n: number }>`
      select count(*) as n from ${first} f join search_documents s on s.doc_key = f.rowid where ${where}`.execute(db)).rows[0]!.n);
    if (req.pageSize === 0 || totalCount <= req.startIndex) return { totalCount, matches: [] };
    const window = await rankedWindow(db, req, first, where);
    const rows = await windowRows(db, window);
    const matches = await matchesOf(rows, req.query.required.length > 1, async (keys, anyWord) => {
      const query = anyWord ? anyQuery(req.query.required) : allQuery(req.query.required);
      return new Map(await Promise.all(keys.map(async (k) => [k, await pageHits(db, k, query, req.maxHits)] as const)));
    });
    return { totalCount, matches };
  },
};
