import assert from "node:assert/strict";
import { test } from "node:test";
import SQLite from "better-sqlite3";
import { foldedWords, fts5Fold } from "../../src/domain/word-pairs.ts";

/**
 * The words and pairs tables on SQLite hold words folded in JS (`fts5Fold`), the pages and
 * meta tables words folded by FTS5 itself: a phrase is found by the first and checked whole by the
 * second, so both must fold every script alike.
 */

const TEXTS = [
  "CAFÉ Crème NAÏVE Ångström Łódź Straße Œuvre Ærø ÿ Ÿ ǅ ǈ ǲ ﬁne Ǆ İstanbul ıi",
  "Ἀθῆναι εἶναι πόλη ΣΟΦΊΑ ἄνθρωπος ὁδός",
  "Йод и соль Ёж ёлка Ў ў Ї ї",
  "Việt Nam Hà Nội Đà Nẵng ơ ư",
  "日本語テキスト 中文 한국어 ｆｕｌｌｗｉｄｔｈ",
  "Ṡṫṙïṅġ ḃḋḟ ẞ e\u0301te\u0301",
];

test("JS folds and splits words as FTS5's unicode61 (remove_diacritics 2) does, in every script", () => {
  const db = new SQLite(":memory:");
  try {
    db.exec(`create virtual table t using fts5(body, tokenize='unicode61 remove_diacritics 2');
      create virtual table v using fts5vocab(t, 'instance');`);
    for (const text of TEXTS) {
      db.prepare("delete from t").run();
      db.prepare("insert into t (rowid, body) values (1, ?)").run(text);
      const fts5 = (db.prepare("select term from v order by offset").all() as Array<{ term: string }>).map((r) => r.term);
      assert.deepEqual(foldedWords(text, fts5Fold), fts5, text);
    }
  } finally {
    db.close();
  }
});
