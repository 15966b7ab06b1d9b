import SQLite from "better-sqlite3";

/** How FTS5 reads text here: case and accents folded by unicode61, words stemmed by porter. */
export const FTS5_TOKENIZE = "porter unicode61 remove_diacritics 2";

interface Tokenizer {
  tokenize(texts: readonly string[]): string[][];
}

let scratch: Tokenizer | undefined;

/**
 * Each text's tokens in order, exactly as FTS5 makes them with FTS5_TOKENIZE (folded and stemmed).
 * FTS5 lends its tokenizer to SQL only through an index, so a private in-memory database indexes
 * the texts in a contentless table and reads them back, by position, through `fts5vocab`; the
 * store's own database is never touched. The terms index (`sqlite-search.ts`) is written and
 * queried in these tokens, so a word and a pair of words mean the same there as in FTS5's tables.
 */
export function fts5Tokens(texts: readonly string[]): string[][] {
  scratch ??= openTokenizer();
  return scratch.tokenize(texts);
}

function openTokenizer(): Tokenizer {
  const db = new SQLite(":memory:");
  db.exec(`create virtual table scratch using fts5(body, content='', tokenize='${FTS5_TOKENIZE}');
    create virtual table scratch_tokens using fts5vocab(scratch, 'instance');`);
  const insert = db.prepare("insert into scratch (rowid, body) values (?, ?)");
  const read = db.prepare("select term, doc, offset from scratch_tokens").raw(true);
  const clear = db.prepare("insert into scratch (scratch) values ('delete-all')");
  const tokenize = db.transaction((texts: readonly string[]): string[][] => {
    const out = texts.map((): string[] => []);
    texts.forEach((text, i) => {
      if (text) insert.run(i + 1, text);
    });
    for (const [term, doc, offset] of read.iterate() as IterableIterator<[string, number, number]>) out[doc - 1]![offset] = term;
    clear.run();
    // unicode61 and porter give every position one token; a hole would only join two words that were not neighbours.
    return out.map((tokens) => tokens.filter((t) => t !== undefined));
  });
  return { tokenize };
}
