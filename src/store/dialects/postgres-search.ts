import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Phrase, SearchQuery } from "../../domain/search-query.ts";
import type { Database } from "../schema.ts";
import { vectorPairs } from "./postgres-pairs.ts";
import { FIELD_WEIGHTS, matchesOf, scopeFilter, tagsText, type RankedKey, type SearchEngine, type SearchHit, type SearchRequest, windowRows } from "../search-index.ts";

/**
 * PostgreSQL text search (decisions §11). Each document is parsed with the configuration of its
 * `language` (`quire_<name>`: the built-in one with `unaccent` before stemming, so accents fold
 * and snippets keep them), `quire_simple` when it has none or the database has no such language.
 *
 * `search_documents` holds per document its title, tags and description (`meta`, weights A, B,
 * C, with positions, for ranking), `words`: those and the whole text's words without positions
 * (a whole book's positions would pass the tsvector's bounds), and `pairs`: each pair of
 * neighbouring words of a field or a page with their distance (`vectorPairs`), both under GIN
 * indexes; `search_pages` each page's text and vector, for the pages that matched, the check of
 * a phrase of three or more words, and snippets (`ts_headline`). A phrase is its pairs: one GIN
 * lookup, where checking it page by page took seconds for common words at a million pages. The rank is the title's, tags' and description's: ranking by the text would
 * read every matching document's whole vector, which a query of a common word cannot afford
 * (documents that match by their text alone tie, ordered by documentId).
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

// Every word quoted: websearch_to_tsquery then reads no operator (`or`, `-`) from user text.
const quoted = (p: Phrase) => `"${p.join(" ")}"`;
/** websearch syntax of the whole query. */
const exactQuery = (q: SearchQuery) => [...q.required.map(quoted), ...q.excluded.map((p) => `-${quoted(p)}`)].join(" ");
/** Without phrases (the document's text has no positions): each word of a phrase required, excluded phrases left to `phraseChecks`. */
const looseQuery = (q: SearchQuery) =>
  [...q.required.flat().map((w) => quoted([w])), ...q.excluded.filter((p) => p.length === 1).map((p) => `-${quoted(p)}`)].join(" ");
const anyQuery = (q: SearchQuery) => q.required.map(quoted).join(" or ");

/** A phrase is found in the title, tags, description, or within one page. */
function phraseFound(p: Phrase): RawBuilder<unknown> {
  const tsq = sql`websearch_to_tsquery(s.config, ${quoted(p)})`;
  return sql`(s.meta @@ ${tsq} or exists (select 1 from search_pages p where p.doc_key = s.doc_key and p.tsv @@ ${tsq}))`;
}

/**
 * Phrases the pairs do not decide: a required one of three or more words (each of its pairs may be
 * found without the whole), and an excluded one (its pairs would be read from every candidate's row).
 */
function phraseChecks(q: SearchQuery): RawBuilder<unknown> {
  const checks = [
    ...q.required.filter((p) => p.length > 2).map(phraseFound),
    ...q.excluded.filter((p) => p.length > 1).map((p) => sql`not ${phraseFound(p)}`),
  ];
  return checks.length ? sql` and ${sql.join(checks, sql` and `)}` : sql``;
}

/** The pairs of the query's required phrases in each configuration, which a document's pairs must hold. */
async function phrasePairs(db: Kysely<Database>, configs: readonly string[], q: SearchQuery): Promise<Map<string, string[]>> {
  const phrases = q.required.filter((p) => p.length > 1).map((p) => p.join(" "));
  const byConfig = new Map<string, string[]>();
  if (phrases.length === 0) return byConfig;
  const vectors = await sql<{ config: string; vector: string }>`
    select c.config, to_tsvector(c.config::regconfig, p.phrase)::text as vector
      from unnest(${configs}::text[]) as c(config) cross join unnest(${phrases}::text[]) as p(phrase)`.execute(db);
  for (const config of configs) byConfig.set(config, vectorPairs(vectors.rows.filter((r) => r.config === config).map((r) => r.vector)));
  return byConfig;
}

/** Normalisation 32 makes each rank 0..1. Weights are {D, C, B, A}: title A, tags B, description C. */
const SCORE = sql.join(
  [
    sql`${FIELD_WEIGHTS.title} * ts_rank('{0,0,0,1}', s.meta, q.exact, 32)`,
    sql`${FIELD_WEIGHTS.tags} * ts_rank('{0,0,1,0}', s.meta, q.exact, 32)`,
    sql`${FIELD_WEIGHTS.description} * ts_rank('{0,1,0,0}', s.meta, q.exact, 32)`,
  ],
  sql` + `,
);

/**
 * Runs the matching query where the planner takes the documents' words through their GIN index.
 * It cannot see that the other ways cost more: a whole text's `words` is stored out of line, and
 * a plan that filters rows by it (a sequential scan, or a scan of another index) reads every
 * candidate's vector back. For a word in every one of 10,000 documents of 100 pages that was
 * 800 MB read and 0.7–1 s; through the index, which answers a word without its row, 20 ms.
 */
async function forceGinPlan<T>(db: Kysely<Database>, run: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    await sql`set local enable_indexscan = off`.execute(trx);
    return run(trx);
  });
}

/**
 * The matching pages of a document examined for its hits, in page order: a word on every page of
 * 10 result documents of 100 pages each would otherwise rank and read 1,000 pages for the 50 shown.
 */
const PAGES_EXAMINED = 25;

/** The pages of one document that match, best first (ts_rank, then page order), among its first PAGES_EXAMINED. */
async function pageHits(db: Kysely<Database>, docKey: number, query: string, limit: number): Promise<SearchHit[]> {
  const rows = await sql<{ page: number; snippet: string }>`
    with t as (select s.config, websearch_to_tsquery(s.config, ${query}) as q from search_documents s where s.doc_key = ${docKey}),
      examined as (select p.page, p.body, ts_rank(p.tsv, t.q) as r from search_pages p, t
                    where p.doc_key = ${docKey} and p.tsv @@ t.q order by p.page limit ${PAGES_EXAMINED})
    select e.page, ts_headline(t.config, e.body, t.q, 'StartSel=[[, StopSel=]], MaxWords=24, MinWords=10, MaxFragments=1') as snippet
      from examined e, t order by e.r desc, e.page limit ${limit}`.execute(db);
  return rows.rows.map((r) => ({ page: Number(r.page), snippet: r.snippet }));
}

/** The pairs of a document: its pages' (`search_pages`) and each of its fields'. */
async function writePairs(db: Kysely<Database>, docKey: number, config: string, doc: { title: string; description: string; tags: string }) {
  const fields = [doc.title, doc.description, ...(JSON.parse(doc.tags) as string[])];
  const vectors = await sql<{ vector: string }>`
    select tsv::text as vector from search_pages where doc_key = ${docKey}
    union all select to_tsvector(${config}::regconfig, f)::text from unnest(${fields}::text[]) as f`.execute(db);
  await sql`update search_documents set pairs = ${vectorPairs(vectors.rows.map((r) => r.vector))}::text[] where doc_key = ${docKey}`.execute(db);
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
    await sql`alter table search_documents add column pairs text[] not null default '{}'`.execute(db);
    await sql`create index search_documents_pairs on search_documents using gin (pairs)`.execute(db);
    await sql`create index search_documents_config on search_documents (config)`.execute(db);
    await sql`create table search_pages (
      doc_key bigint not null references search_documents(doc_key) on delete cascade,
      page integer not null,
      body text not null,
      tsv tsvector not null,
      primary key (doc_key, page))`.execute(db);
  },

  async index(trx, doc, pages) {
    const cfg = configOf(doc.language);
    const before = await sql<{ docKey: number; config: string }>`
      select doc_key, config::text as config from search_documents where document_id = ${doc.documentId}`.execute(trx);
    const meta = sql`setweight(to_tsvector(${cfg}, ${doc.title}), 'A') || setweight(to_tsvector(${cfg}, ${tagsText(doc.tags)}), 'B')
      || setweight(to_tsvector(${cfg}, ${doc.description}), 'C')`;
    const written = await sql<{ docKey: number; config: string }>`
      insert into search_documents (document_id, config, meta, words) values (${doc.documentId}, ${cfg}, ${meta}, ''::tsvector)
      on conflict (document_id) do update set config = excluded.config, meta = excluded.meta
      returning doc_key, config::text as config`.execute(trx);
    const { docKey, config } = written.rows[0]!;
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
    // The fields and the whole text's lexemes, without positions, from the pages' vectors (the text is parsed once).
    await sql`update search_documents set words = meta || coalesce((select array_to_tsvector(array_agg(distinct u.lexeme))
      from search_pages p cross join lateral unnest(p.tsv) u where p.doc_key = ${docKey}), ''::tsvector) where doc_key = ${docKey}`.execute(trx);
    await writePairs(trx, docKey, config, doc);
  },

  async upgrade(db) {
    // Before 0012 a phrase was checked page by page: the pairs are read from the pages' vectors.
    const has = await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = 'search_documents' and column_name = 'pairs'`.execute(db);
    if (has.rows.length > 0) return;
    await sql`alter table search_documents add column pairs text[] not null default '{}'`.execute(db);
    const docs = await sql<{ docKey: number; config: string; title: string; description: string; tags: string }>`
      select s.doc_key, s.config::text as config, d.title, d.description, d.tags
        from search_documents s join documents d on d.document_id = s.document_id order by s.doc_key`.execute(db);
    for (const doc of docs.rows) await writePairs(db, Number(doc.docKey), doc.config, doc);
    // Built once over the whole table, with room to sort: much faster than growing it row by row.
    await sql`set local maintenance_work_mem = '512MB'`.execute(db);
    await sql`create index search_documents_pairs on search_documents using gin (pairs)`.execute(db);
  },

  async hasPageText(db, documentId) {
    const found = await sql`select 1 from search_documents s join search_pages p on p.doc_key = s.doc_key where s.document_id = ${documentId} limit 1`.execute(db);
    return found.rows.length > 0;
  },

  async search(db, req: SearchRequest) {
    const configs = (await sql<{ config: string }>`select distinct config::text as config from search_documents`.execute(db)).rows.map((r) => r.config);
    if (configs.length === 0) return { totalCount: 0, matches: [] };
    const exact = exactQuery(req.query);
    const loose = looseQuery(req.query);
    // Each configuration's queries are constants the planner folds, so the GIN index serves the match.
    const perConfig = (text: string) =>
      sql`(case s.config ${sql.join(configs.map((c) => sql`when ${c}::regconfig then websearch_to_tsquery(${c}::regconfig, ${text})`), sql` `)} end)`;
    // config compared as text: an index on it must never be the way in (see forceGinPlan).
    const pairs = await phrasePairs(db, configs, req.query);
    const pairsHeld = (c: string) => (pairs.get(c)?.length ? sql` and s.pairs @> ${pairs.get(c)}::text[]` : sql``);
    const matching = sql.join(
      configs.map((c) => sql`(s.config::text = ${c} and s.words @@ websearch_to_tsquery(${c}::regconfig, ${loose})${pairsHeld(c)})`),
      sql` or `,
    );
    // Ranked by the title, tags and description only where they hold a part of the query (ts_rank would read every candidate's).
    const from = sql`from search_documents s
        cross join lateral (select ${perConfig(exact)} as exact, ${perConfig(anyQuery(req.query))} as any) q
        join documents d on d.document_id = s.document_id
       where (${matching}) and ${scopeFilter(req.scope)}${phraseChecks(req.query)}`;
    // The window first, on keys alone; the documents' rows only for it.
    const { window, totalCount } = await forceGinPlan(db, async (trx) => {
      const found = (await sql<RankedKey & { total: number }>`
        select s.doc_key as k, d.document_id, case when s.meta @@ q.any then ${SCORE} else 0 end as score, count(*) over () as total ${from}
         order by score desc, d.document_id collate "C" limit ${Math.max(1, req.pageSize)} offset ${req.startIndex}`.execute(trx)).rows;
      let total = found.length ? Number(found[0]!.total) : 0;
      if (found.length === 0 && req.startIndex > 0) {
        total = Number((await sql<{ n: number }>`select count(*) as n ${from}`.execute(trx)).rows[0]?.n ?? 0);
      }
      return { window: found, totalCount: total };
    });
    if (req.pageSize === 0 || window.length === 0) return { totalCount, matches: [] };
    const rows = await windowRows(db, window);
    if (req.pageSize === 0) return { totalCount, matches: [] };
    const all = exactQuery({ required: req.query.required, excluded: [] });
    const matches = await matchesOf(rows, req.query.required.length > 1, (key, anyWord) =>
      pageHits(db, key, anyWord ? anyQuery(req.query) : all, req.maxHits),
    );
    return { totalCount, matches };
  },
};
