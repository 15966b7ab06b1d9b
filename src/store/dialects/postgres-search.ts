import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Phrase, SearchQuery } from "../../domain/search-query.ts";
import type { Database } from "../schema.ts";
import { phrasePairs, phraseWords, wordPairs, type Fold } from "../../domain/word-pairs.ts";
import { MARK_CLOSE, MARK_OPEN, matchWindow, pageSnippet } from "../search-snippet.ts";
import {
  FIELD_WEIGHTS, matchesOf, PAGES_EXAMINED, scopeFilter, tagsText, type IndexedFields, type RankedKey, type SearchEngine, type SearchHit, type SearchRequest, windowRows,
} from "../search-index.ts";

/**
 * PostgreSQL text search (decisions §11). Each document is parsed with the configuration of its
 * `language` (`quire_<name>`: the built-in one with `unaccent` before stemming, so accents fold
 * and snippets keep them), `quire_simple` when it has none or the database has no such language.
 *
 * `search_documents` holds per document its account, state and access (kept by a trigger on
 * documents), its title, tags and description (`meta`, weights A, B, C, with positions, for
 * ranking) and `words`: those and the whole text's words without positions (a whole book's
 * positions would pass the tsvector's bounds), each under a GIN index; `search_pairs` each pair
 * of neighbouring words of a field or a page (`wordPairs`, the same as on SQLite), hashed
 * (`pairKey`), under GIN indexes in partitions (`PAIRS_PARTITION`); `search_pages` each page's
 * text and vector, for the pages that matched, the check of a phrase of three or more words, and
 * snippets (`ts_headline`). A phrase is its pairs: one GIN lookup per partition, where checking
 * it page by page took seconds for common words at a million pages. The rank is the title's,
 * tags' and description's: ranking by the text would read every matching document's whole
 * vector, which a query of a common word cannot afford (documents that match by their text
 * alone tie, ordered by documentId).
 */

/** ISO 639-1 codes and the text search configuration PostgreSQL ships for each. */
const CONFIGS: Record<string, string> = {
  ar: "arabic", hy: "armenian", eu: "basque", ca: "catalan", da: "danish", nl: "dutch", en: "english", fi: "finnish",
  fr: "french", de: "german", el: "greek", hi: "hindi", hu: "hungarian", id: "indonesian", ga: "irish", it: "italian",
  lt: "lithuanian", ne: "nepali", no: "norwegian", nb: "norwegian", nn: "norwegian", pt: "portuguese", ro: "romanian",
  ru: "russian", sr: "serbian", es: "spanish", sv: "swedish", ta: "tamil", tr: "turkish", yi: "yiddish",
};

const configName = (language: string) => `quire_${CONFIGS[language] ?? "simple"}`;
/** The configuration's own when the migration could make it (the server's PostgreSQL has the language), else simple. */
const configOf = (language: string) => sql`coalesce((select oid::regconfig from pg_ts_config where cfgname = ${configName(language)}), 'quire_simple'::regconfig)`;

// Every part quoted: websearch_to_tsquery then reads no operator (`or`, `-`) from user text. As
// typed, so its parser finds the words it keeps whole (`3.14`); no part holds a `"`.
const quoted = (p: Phrase) => `"${p.text ?? p.join(" ")}"`;
/**
 * unaccent's replacement of each character met so far, as the server's rules have it. Its rules
 * replace one character at a time (1,650 of them), so a text is folded here character by
 * character exactly as the `unaccent` dictionary of every quire_* configuration folds it.
 */
const unaccented = new Map<string, string>();
const NOT_ASCII = /[^\p{ASCII}]/gu;

/** Asks the server for unaccent's replacement of the characters of these texts not met before (most text brings none). */
async function learnUnaccent(db: Kysely<Database>, texts: readonly string[]): Promise<void> {
  const fresh = new Set<string>();
  for (const text of texts) for (const ch of text.match(NOT_ASCII) ?? []) if (!unaccented.has(ch)) fresh.add(ch);
  if (fresh.size === 0) return;
  const rows = await sql<{ c: string; u: string }>`select c, unaccent(c) as u from unnest(${[...fresh]}::text[]) as c`.execute(db);
  for (const r of rows.rows) unaccented.set(r.c, r.u);
}

/**
 * PostgreSQL's folding (unaccent, then lower case): `Straße` is `strasse`, `Ἀθῆναι` `αθηναι`,
 * `Йод` stays `йод`. Pairs and phrases are folded so, as the documents' words are; the characters
 * must have been learned first (`learnUnaccent`).
 */
const pgFold: Fold = (text) => text.replace(NOT_ASCII, (ch) => unaccented.get(ch) ?? ch).toLowerCase();

/** How many words the index reads in a part of the query: 1 is a word, 2 a phrase its one pair decides. */
const size = (p: Phrase) => phraseWords(p, pgFold).length;
/** websearch syntax of all the parts, or of any of them. */
const allQuery = (parts: readonly Phrase[]) => parts.map(quoted).join(" ");
const anyQuery = (parts: readonly Phrase[]) => parts.map(quoted).join(" or ");
/**
 * A pair of words as the pairs column holds it: a 53-bit hash of its text. A document of 100
 * pages brings some 20,000 pairs, nearly all new to the index, so their entries are most of its
 * size and of the cost of writing it: as numbers, 70% of the size and 80% of the time of text
 * (measured on 200 such documents). Two pairs share a hash once in 2^53: at a million pages, one
 * phrase query in some 50 million may list a document that holds its words but not the phrase.
 */
export function pairKey(pair: string): number {
  // cyrb53 (public domain): two 32-bit multiply-xorshift lanes, folded into 53 bits.
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < pair.length; i++) {
    const c = pair.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const pairsOf = (phrases: readonly Phrase[]) => [...new Set(phrases.flatMap((p) => phrasePairs(p, pgFold)))].map(pairKey);

/**
 * Each configuration's condition on `s` for a websearch query, OR-ed: the tsquery of each is a
 * constant the planner folds, so the column's GIN index serves it. No index holds the config, so
 * none can be the way in (see forceGinPlan), and with one configuration in use it is not asked.
 */
function perConfig(configs: readonly string[], column: "words" | "meta", text: string): RawBuilder<unknown> {
  const match = (c: string) => sql`s.${sql.raw(column)} @@ websearch_to_tsquery(${c}::regconfig, ${text})`;
  if (configs.length === 1) return match(configs[0]!);
  return sql`(${sql.join(configs.map((c) => sql`(s.config = ${c}::regconfig and ${match(c)})`), sql` or `)})`;
}

/** The same query in each document's own configuration, as an expression on `s`. */
function configQuery(configs: readonly string[], text: string): RawBuilder<unknown> {
  return sql`(case s.config ${sql.join(configs.map((c) => sql`when ${c}::regconfig then websearch_to_tsquery(${c}::regconfig, ${text})`), sql` `)} end)`;
}

/**
 * websearch syntax of the single words every match must hold, and of those it must not (a phrase
 * is found by its pairs alone: PostgreSQL's parser keeps `3.14` or an e-mail address as one word,
 * which no word of the split query would find); undefined when there is no such word.
 */
function wordsQuery(q: SearchQuery): string | undefined {
  const required = q.required.filter((p) => size(p) === 1);
  if (required.length === 0) return undefined;
  return [...required.map(quoted), ...q.excluded.filter((p) => size(p) === 1).map((p) => `-${quoted(p)}`)].join(" ");
}

/**
 * The documents (key and id) in scope holding every required part and no excluded one, through
 * GIN indexes only, so no plan ever filters rows by a whole text's vector or pairs (read back
 * out of line, that cost 800 MB for a common word). `w`: the documents holding the single words
 * (the words' index) or, without any, the phrases' pairs (the keys the pairs' index gives, looked
 * up in one pass of the documents' key index); `c`: those of `w` that also hold the phrases and
 * none of the excluded parts, each a set read once from its index and hashed.
 */
function candidates(configs: readonly string[], req: SearchRequest): RawBuilder<unknown> {
  const q = req.query;
  const words = wordsQuery(q);
  const phrases = q.required.filter((p) => size(p) > 1);
  const holding = sql`select search_pairs_holding(${pairsOf(phrases)}::int8[])`;
  // An array computed once (not a constant the planner would weigh key by key, 8 ms for 10,000).
  const held = words !== undefined ? perConfig(configs, "words", words) : sql`s.doc_key = any(array(${holding}))`;
  const filters: RawBuilder<unknown>[] = [];
  if (words !== undefined && phrases.length) filters.push(sql`w.doc_key in (${holding})`);
  const exWords = q.excluded.filter((p) => size(p) === 1);
  if (words === undefined && exWords.length) {
    filters.push(sql`w.doc_key not in (select s.doc_key from search_documents s where ${perConfig(configs, "words", anyQuery(exWords))})`);
  }
  // A pair decides a phrase of two words; a longer one removes the documents that hold its pairs and the whole phrase.
  const exPairs = q.excluded.filter((p) => size(p) === 2);
  if (exPairs.length) filters.push(sql`w.doc_key not in (select search_pairs_holding_any(${pairsOf(exPairs)}::int8[]))`);
  for (const p of q.excluded.filter((x) => size(x) > 2)) {
    filters.push(sql`not (w.doc_key in (select search_pairs_holding(${pairsOf([p])}::int8[])) and ${phraseFound(p, sql`w.doc_key`)})`);
  }
  // A required phrase of three or more words, whose pairs only suggest it, must be found whole.
  for (const p of q.required.filter((x) => size(x) > 2)) filters.push(phraseFound(p, sql`w.doc_key`));
  const w = sql`select s.doc_key, s.document_id from search_documents s where ${held} and ${scopeFilter(req.scope)}`;
  if (filters.length === 0) return sql`c as materialized (${w})`;
  return sql`w as materialized (${w}), c as materialized (select w.doc_key, w.document_id from w where ${sql.join(filters, sql` and `)})`;
}

/**
 * Whether the document of this key holds the phrase within its title, its description, one of its
 * tags, or one page. The fields are read apart from the document's row: in `meta` they run into
 * one another.
 */
function phraseFound(p: Phrase, key: RawBuilder<unknown>): RawBuilder<unknown> {
  const tsq = sql`websearch_to_tsquery(f.config, ${quoted(p)})`;
  // A phrase of stop words only (`"to be or not to be"`) is nothing to the configuration: its pairs decide.
  return sql`exists (select 1 from search_documents f join documents d on d.document_id = f.document_id where f.doc_key = ${key} and (
    numnode(${tsq}) = 0 or to_tsvector(f.config, d.title) @@ ${tsq} or to_tsvector(f.config, d.description) @@ ${tsq}
    or exists (select 1 from json_array_elements_text(d.tags::json) t(tag) where to_tsvector(f.config, t.tag) @@ ${tsq})
    or exists (select 1 from search_pages p where p.doc_key = f.doc_key and p.tsv @@ ${tsq})))`;
}

/** Normalisation 32 makes each rank 0..1. Weights are {D, C, B, A}: title A, tags B, description C. */
function score(exact: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql.join(
    [
      sql`${FIELD_WEIGHTS.title} * ts_rank('{0,0,0,1}', s.meta, ${exact}, 32)`,
      sql`${FIELD_WEIGHTS.tags} * ts_rank('{0,0,1,0}', s.meta, ${exact}, 32)`,
      sql`${FIELD_WEIGHTS.description} * ts_rank('{0,1,0,0}', s.meta, ${exact}, 32)`,
    ],
    sql` + `,
  );
}

/**
 * Runs the matching query where the planner takes the documents' words and pairs through their
 * GIN indexes. It cannot see that the other ways cost more: a whole text's `words` and `pairs`
 * are stored out of line, and a plan that filters rows by them (a sequential scan, or a scan of
 * another index) reads every candidate's back. For a word in every one of 10,000 documents of
 * 100 pages that was 800 MB read and 0.7–1 s; through the index, which answers a word without
 * its row, 20 ms.
 */
async function forceGinPlan<T>(db: Kysely<Database>, run: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    // JIT off too: a plan with a disabled node is priced past JIT's threshold, and compiling it took 0.9 s.
    await sql`select set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true), set_config('jit', 'off', true)`.execute(trx);
    return run(trx);
  });
}

/**
 * The pages of each document that match, best first (ts_rank, then page order), among its first
 * PAGES_EXAMINED, with their snippets: the pages in one statement for the whole window, then
 * their marks in one more. `ts_headline` marks only the part of each page around a word of the
 * query as written (`matchWindow`), the whole page when it holds another form only; the snippet
 * is then cut as on SQLite (`pageSnippet`).
 */
async function pageHits(db: Kysely<Database>, keys: readonly number[], parts: readonly Phrase[], anyWord: boolean, limit: number): Promise<Map<number, SearchHit[]>> {
  const query = anyWord ? anyQuery(parts) : allQuery(parts);
  const pages = (await sql<{ docKey: number; page: number; body: string; config: string }>`
    -- Materialized, so each document's query is parsed once, not again for every page read.
    with d as materialized (select s.doc_key, s.config, websearch_to_tsquery(s.config, ${query}) as q from search_documents s where s.doc_key = any(${keys}::bigint[]))
    select d.doc_key, d.config::text as config, e.page, e.body
      from d cross join lateral (
        select x.page, x.body, x.r from (select p.page, p.body, ts_rank(p.tsv, d.q) as r from search_pages p
          where p.doc_key = d.doc_key and p.tsv @@ d.q order by p.page limit ${PAGES_EXAMINED}) x
         order by x.r desc, x.page limit ${limit}) e
     order by d.doc_key, e.r desc, e.page`.execute(db)).rows;
  if (pages.length === 0) return new Map();
  const words = [...new Set(parts.flatMap((p) => phraseWords(p, pgFold)))];
  await learnUnaccent(db, pages.map((p) => p.body));
  const windows = pages.map((p) => matchWindow(p.body, words, pgFold) ?? { text: p.body, before: false, after: false });
  const marked = (await sql<{ marked: string }>`
    select ts_headline(t.config::regconfig, t.text, websearch_to_tsquery(t.config::regconfig, ${query}),
             ${`HighlightAll=true, StartSel=${MARK_OPEN}, StopSel=${MARK_CLOSE}`}) as marked
      from unnest(${pages.map((p) => p.config)}::text[], ${windows.map((w) => w.text)}::text[]) with ordinality as t(config, text, n)
     order by t.n`.execute(db)).rows;
  const hits = new Map<number, SearchHit[]>();
  pages.forEach((p, i) => {
    const key = Number(p.docKey);
    if (!hits.has(key)) hits.set(key, []);
    hits.get(key)!.push({ page: Number(p.page), snippet: pageSnippet(marked[i]!.marked, MARK_OPEN, MARK_CLOSE, windows[i]!) });
  });
  return hits;
}

/** The pairs of a document's fields and pages (read back from `search_pages` when not given). */
async function documentPairs(db: Kysely<Database>, docKey: number, doc: Pick<IndexedFields, "title" | "description" | "tags">, pages: readonly string[] | undefined) {
  const pageTexts = pages ?? (await sql<{ body: string }>`select body from search_pages where doc_key = ${docKey} order by page`.execute(db)).rows.map((r) => r.body);
  const texts = [doc.title, doc.description, ...(JSON.parse(doc.tags) as string[]), ...pageTexts];
  await learnUnaccent(db, texts);
  return wordPairs(texts, pgFold).map(pairKey);
}

/**
 * Documents per partition of `search_pairs`, by their key. A document's pairs are nearly all new
 * to the index, so writing them touches a page of the GIN index for each: in one index of every
 * document's pairs, those pages were soon out of memory and each written whole to the WAL again
 * after every checkpoint (74 MB of WAL and 430 ms per document of 100 pages at 2,000 documents,
 * and growing). A partition's index stays small and in memory: 2.6 MB of WAL and 130 ms per
 * such document at any size while documents arrive steadily (after a checkpoint, the first one
 * writes the pages it touches whole: at most the partition's index); a phrase query reads one
 * small index per partition.
 */
const PAIRS_PARTITION = 256;

/** Creates the partition of `search_pairs` that holds this key, when none does yet. */
async function ensurePairsPartition(trx: Kysely<Database>, docKey: number): Promise<void> {
  const n = Math.floor(docKey / PAIRS_PARTITION);
  const name = `search_pairs_${n}`;
  const exists = async () => (await sql`select 1 from pg_inherits i join pg_class c on c.oid = i.inhrelid where c.relname = ${name}
    and c.relnamespace = current_schema()::regnamespace`.execute(trx)).rows.length > 0;
  if (!(await exists())) {
    // One creator at a time; the others wait for it to commit, then find the partition there.
    await sql`select pg_advisory_xact_lock(${PAIRS_LOCK}, ${n})`.execute(trx);
    if (!(await exists())) {
      // Attached rather than created as a partition: ATTACH takes a lock that lets searches and writes go on.
      await sql`create table ${sql.id(name)} (like search_pairs including defaults including constraints)`.execute(trx);
      await sql`alter table search_pairs attach partition ${sql.id(name)}
        for values from (${sql.lit(n * PAIRS_PARTITION)}) to (${sql.lit((n + 1) * PAIRS_PARTITION)})`.execute(trx);
    }
  }
}

/** The advisory lock class of partition creation (any number that no other lock of ours uses). */
const PAIRS_LOCK = 0x5151;

/** Writes a document's pairs, computed from its fields and pages (read back from `search_pages` when not given). */
async function writePairs(trx: Kysely<Database>, docKey: number, doc: Pick<IndexedFields, "title" | "description" | "tags">, pages: readonly string[] | undefined) {
  const pairs = await documentPairs(trx, docKey, doc, pages);
  await ensurePairsPartition(trx, docKey);
  await sql`insert into search_pairs (doc_key, pairs) values (${docKey}, ${pairs}::int8[])
    on conflict (doc_key) do update set pairs = excluded.pairs`.execute(trx);
}

/** What 0012 added to 0007's search_documents: its scope, the pairs' table, the meta index, and the trigger that keeps the scope. */
async function addScopeAndPairs(db: Kysely<Database>): Promise<void> {
  await sql`alter table search_documents add column account_id integer not null default 0,
    add column state text not null default '', add column access text not null default ''`.execute(db);
  // No foreign key: attaching a partition would then lock search_documents against every writer
  // holding a row of it, while such a writer waits for the attaching one (a deadlock). A trigger
  // takes a document's pairs with it instead.
  await sql`create table search_pairs (
    doc_key bigint not null,
    pairs int8[] not null,
    primary key (doc_key)) partition by range (doc_key)`.execute(db);
  await sql`create function search_pairs_delete() returns trigger language plpgsql as $$
    begin
      delete from search_pairs where doc_key = old.doc_key;
      return null;
    end $$`.execute(db);
  await sql`create trigger search_pairs_delete after delete on search_documents for each row execute function search_pairs_delete()`.execute(db);
  // The keys of the documents holding all, or any, of these pairs. In PL/pgSQL so each connection
  // plans the lookup once and keeps the plan: planning it over every partition took 0.1 to 0.2 ms a
  // partition, at each query.
  for (const [name, op] of [["search_pairs_holding", "@>"], ["search_pairs_holding_any", "&&"]] as const) {
    await sql.raw(`create function ${name}(keys int8[]) returns setof bigint language plpgsql stable
      set enable_seqscan = off set jit = off as $$
      begin
        return query select doc_key from search_pairs where pairs ${op} keys;
      end $$`).execute(db);
  }
  // No pending list: a document's new pairs would fill it every few documents, and the writer
  // that fills it merges it (a second, now and then), while every phrase query reads it.
  await sql`create index search_pairs_pairs on search_pairs using gin (pairs) with (fastupdate = off)`.execute(db);
  // No pending list: every query reads it (6 ms for meta's at 10,000 documents), and a document's
  // entries are few. The words' keeps theirs (written in place, a document's thousands of words
  // cost publishing 90 ms more for 50 pages), but small: merged at 256 kB rather than 4 MB.
  await sql`create index search_documents_meta on search_documents using gin (meta) with (fastupdate = off)`.execute(db);
  await sql`alter index search_documents_words set (gin_pending_list_limit = 256)`.execute(db);
  // The configurations in use, each once: read by every search, kept by every index write. An index
  // on search_documents' own column was once the planner's way in, before the words' (see perConfig).
  await sql`drop index if exists search_documents_config`.execute(db);
  await sql`create table search_configs (config regconfig primary key)`.execute(db);
  await sql`insert into search_configs select distinct config from search_documents`.execute(db);
  // A document's state and access, as its searches read them, change in the statement that changes them.
  await sql`create function search_documents_scope() returns trigger language plpgsql as $$
    begin
      update search_documents set state = new.state, access = new.access where document_id = new.document_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger search_documents_scope after update of state, access on documents for each row
    when (old.state is distinct from new.state or old.access is distinct from new.access) execute function search_documents_scope()`.execute(db);
}

export const postgresSearch: SearchEngine = {
  async migrate(db) {
    await sql`create extension if not exists unaccent`.execute(db);
    // quire_<name>: a copy of each built-in configuration with unaccent before its own dictionary.
    await sql.raw(`do $$
      declare c text; d text;
      begin
        foreach c in array array['simple', ${[...new Set(Object.values(CONFIGS))].map((c) => `'${c}'`).join(", ")}] loop
          continue when not exists (select 1 from pg_ts_config where cfgname = c);
          select m.mapdict::regdictionary::text into d from pg_ts_config_map m join pg_ts_config f on f.oid = m.mapcfg
           where f.cfgname = c and m.maptokentype = (select tokid from ts_token_type('default') where alias = 'word') order by m.mapseqno desc limit 1;
          execute format('create text search configuration %I (copy = %I)', 'quire_' || c, c);
          execute format('alter text search configuration %I alter mapping for hword, hword_part, word with unaccent, %s', 'quire_' || c, d);
        end loop;
      end $$`).execute(db);
    await sql`create table search_documents (
      doc_key bigint generated by default as identity primary key,
      document_id text not null unique references documents(document_id) on delete cascade,
      config regconfig not null,
      meta tsvector not null,
      words tsvector not null)`.execute(db);
    await sql`create index search_documents_words on search_documents using gin (words)`.execute(db);
    await addScopeAndPairs(db);
    await sql`create table search_pages (
      doc_key bigint not null references search_documents(doc_key) on delete cascade,
      page integer not null,
      body text not null,
      tsv tsvector not null,
      primary key (doc_key, page))`.execute(db);
  },

  async upgrade(db) {
    // Before 0012 a phrase was checked page by page, and a search read each match's documents row.
    const has = await sql`select 1 from information_schema.tables where table_schema = current_schema() and table_name = 'search_pairs'`.execute(db);
    if (has.rows.length > 0) return;
    await addScopeAndPairs(db);
    await sql`update search_documents s set account_id = d.account_id, state = d.state, access = d.access
      from documents d where d.document_id = s.document_id`.execute(db);
    const docs = await sql<{ docKey: number; title: string; description: string; tags: string }>`
      select s.doc_key, d.title, d.description, d.tags from search_documents s join documents d on d.document_id = s.document_id order by s.doc_key`.execute(db);
    for (const doc of docs.rows) await writePairs(db, Number(doc.docKey), doc, undefined);
  },

  async index(trx, doc, pages) {
    const cfg = configOf(doc.language);
    const before = await sql<{ docKey: number; config: string }>`
      select doc_key, config::text as config from search_documents where document_id = ${doc.documentId}`.execute(trx);
    const meta = sql`setweight(to_tsvector(${cfg}, ${doc.title}), 'A') || setweight(to_tsvector(${cfg}, ${tagsText(doc.tags)}), 'B')
      || setweight(to_tsvector(${cfg}, ${doc.description}), 'C')`;
    // Updated when there, else inserted: an upsert takes a key from the sequence every time, and
    // each key counts towards the pairs' partitions.
    const written = before.rows.length
      ? await sql<{ docKey: number; config: string }>`
          update search_documents set state = ${doc.state}, access = ${doc.access}, config = ${cfg}, meta = ${meta}
           where document_id = ${doc.documentId} returning doc_key, config::text as config`.execute(trx)
      : await sql<{ docKey: number; config: string }>`
          insert into search_documents (document_id, account_id, state, access, config, meta, words)
          values (${doc.documentId}, ${doc.accountId}, ${doc.state}, ${doc.access}, ${cfg}, ${meta}, ''::tsvector)
          returning doc_key, config::text as config`.execute(trx);
    const { docKey, config } = written.rows[0]!;
    await sql`insert into search_configs (config) values (${config}::regconfig) on conflict do nothing`.execute(trx);
    if (pages !== undefined) {
      await sql`delete from search_pages where doc_key = ${docKey}`.execute(trx);
      // eslint-disable-next-line no-control-regex -- PostgreSQL text cannot hold NUL
      const texts = pages.map((p) => p.replace(/\u0000/g, ""));
      await sql`insert into search_pages (doc_key, page, body, tsv)
        select ${docKey}, t.n, t.b, to_tsvector(${config}::regconfig, t.b) from unnest(${texts}::text[]) with ordinality as t(b, n) where t.b <> ''`.execute(trx);
    } else if (before.rows[0] && before.rows[0].config !== config) {
      // Another language: its pages are read again with the new configuration.
      await sql`update search_pages set tsv = to_tsvector(${config}::regconfig, body) where doc_key = ${docKey}`.execute(trx);
    }
    // The fields and the whole text's lexemes, without positions, from the pages' vectors (the text
    // is parsed once); array_to_tsvector drops repeated lexemes itself (a distinct first took twice as long).
    await sql`update search_documents set words = meta || coalesce((select array_to_tsvector(array_agg(u))
      from search_pages p cross join lateral unnest(tsvector_to_array(p.tsv)) u where p.doc_key = ${docKey}), ''::tsvector) where doc_key = ${docKey}`.execute(trx);
    await writePairs(trx, docKey, doc, pages);
  },

  async hasPageText(db, documentId) {
    const found = await sql`select 1 from search_documents s join search_pages p on p.doc_key = s.doc_key where s.document_id = ${documentId} limit 1`.execute(db);
    return found.rows.length > 0;
  },

  async search(db, req: SearchRequest) {
    const configs = (await sql<{ config: string }>`select config::text as config from search_configs`.execute(db)).rows.map((r) => r.config);
    if (configs.length === 0) return { totalCount: 0, matches: [] };
    const required = req.query.required;
    await learnUnaccent(db, [...required, ...req.query.excluded].flat());
    const { window, totalCount } = await forceGinPlan(db, async (trx) => {
      // Ranked by the title, tags and description, only where they hold a part of the query (ts_rank
      // would read every candidate's). Those few first, sorted; then the rest, all of score 0, in
      // documentId order: joining every candidate to its rank and sorting them all took 30 ms of a
      // word in 10,000 documents, against 10 for this.
      const end = req.startIndex + Math.max(1, req.pageSize);
      const rows = (await sql<RankedKey & { part: number; total: number }>`
        with ${candidates(configs, req)},
          r as materialized (select s.doc_key, ${score(configQuery(configs, anyQuery(required)))} as score
            from search_documents s where ${perConfig(configs, "meta", anyQuery(required))} and ${scopeFilter(req.scope)})
        select 0 as part, c.doc_key as k, c.document_id, r.score, null::bigint as total from c join r on r.doc_key = c.doc_key
        union all
        select * from (select 1 as part, c.doc_key as k, c.document_id, 0::float8 as score, null::bigint as total from c
          where c.doc_key not in (select doc_key from r) order by c.document_id collate "C" limit ${end}) rest
        union all
        select 2 as part, null, null, null, (select count(*) from c)`.execute(trx)).rows;
      const total = Number(rows.find((r) => r.part === 2)!.total);
      // documentIds are ASCII: JS orders them as collation "C" does.
      const byId = (a: RankedKey, b: RankedKey) => (a.documentId < b.documentId ? -1 : a.documentId > b.documentId ? 1 : 0);
      const ranked = rows.filter((r) => r.part === 0).sort((a, b) => b.score - a.score || byId(a, b));
      const rest = rows.filter((r) => r.part === 1).sort(byId);
      const window = [...ranked, ...rest].slice(req.startIndex, end).map(({ k, documentId, score: sc }) => ({ k, documentId, score: Number(sc) }));
      return { window, totalCount: total };
    });
    if (req.pageSize === 0 || window.length === 0) return { totalCount, matches: [] };
    const rows = await windowRows(db, window);
    const matches = await matchesOf(rows, required.length > 1, (keys, anyWord) => pageHits(db, keys, required, anyWord, req.maxHits));
    return { totalCount, matches };
  },
};
