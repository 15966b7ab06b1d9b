import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parseSearchQuery } from "../../src/domain/search-query.ts";
import type { Store } from "../../src/store/open-store.ts";
import { windowRows, type SearchScope } from "../../src/store/search-index.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { fillerPage, newStoreDoc, publishWithText } from "../helpers/search-docs.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/** The full-text index on SQLite FTS5 and PostgreSQL text search alike (decisions §11). */

const pgSkip = await postgresUnavailable();

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`search index on ${dialect.name}`, { skip }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let alice: number;
    let bob: number;
    const ids: Record<string, string> = {};

    const search = async (q: string, scope?: Partial<SearchScope>) => {
      const full = (scope?.kind === "public" ? scope : { kind: "account", accountId: alice, states: ["A"], ...scope }) as SearchScope;
      return store.search.search({ query: parseSearchQuery(q), scope: full, startIndex: 0, pageSize: 100, maxHits: 5 });
    };
    const titles = async (q: string, scope?: Partial<SearchScope>) => (await search(q, scope)).matches.map((m) => m.record.title);
    /** Publishes these documents of alice's for one test's checks, then deletes them, whatever the checks find. */
    const withDocuments = async (docs: ReadonlyArray<readonly [Partial<DocumentRecord>, readonly string[]]>, check: () => Promise<void>) => {
      const published: string[] = [];
      try {
        for (const [fields, pages] of docs) published.push((await publishWithText(store, newStoreDoc(alice, "alice", fields), pages)).documentId);
        await check();
      } finally {
        await store.documents.deleteByNames(alice, published);
      }
    };

    before(async () => {
      ({ store, drop } = await dialect.open());
      alice = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
      bob = (await seedAccount(store, "bob", "b".repeat(32), "s".repeat(32), 1));
      const pages = Array.from({ length: 40 }, (_, i) => fillerPage(i + 1));
      pages[36] = "Only this page mentions the xylophone orchestra, tuned for the spring concert.";
      ids.long = (await publishWithText(store, newStoreDoc(alice, "alice", { title: "Annual report" }), pages)).documentId;
      ids.titled = (await publishWithText(store, newStoreDoc(alice, "alice", { title: "Lighthouse keepers", tags: ["coast"] }), [
        "A short note about nothing much.",
      ])).documentId;
      ids.body = (await publishWithText(store, newStoreDoc(alice, "alice", { title: "Maritime notes" }), [
        "The lighthouse stood on the rock. Every lighthouse keeper kept a log of ships.",
        "Tuesday: the keeper wrote about the café crème served at the harbour.",
      ])).documentId;
      ids.private = (await publishWithText(store, newStoreDoc(alice, "alice", { title: "Secret plans", access: "private" }), [
        "The lighthouse treasure map is hidden here.",
      ])).documentId;
      ids.bob = (await publishWithText(store, newStoreDoc(bob, "bob", { title: "Bob's lighthouse" }), ["Lighthouse photos."])).documentId;
      const pending = newStoreDoc(alice, "alice", { title: "Lighthouse draft", state: "P" });
      await store.documents.insertWithJob(pending, "convert-document");
      ids.pending = pending.documentId;
    });
    after(async () => drop());

    test("a word only in page 37's text finds page 37 with its snippet", async () => {
      const { matches, totalCount } = await search("xylophone");
      assert.equal(totalCount, 1);
      assert.equal(matches[0]!.record.documentId, ids.long);
      assert.deepEqual(matches[0]!.hits.map((h) => h.page), [37]);
      assert.match(matches[0]!.hits[0]!.snippet, /\[\[xylophone\]\]/i);
    });

    test("a document's matching pages come best first: the most matches, then in page order, at most maxHits", async () => {
      const pages = Array.from({ length: 8 }, (_, i) => fillerPage(i + 1));
      pages[1] = "One marimba here.";
      pages[3] = "A marimba, a second marimba and a third marimba.";
      pages[5] = "Two of them: marimba and marimba.";
      pages[6] = "Another marimba.";
      await withDocuments([[{ title: "Percussion" }, pages]], async () => {
        const found = await store.search.search({ query: parseSearchQuery("marimba"), scope: { kind: "account", accountId: alice, states: ["A"] }, startIndex: 0, pageSize: 10, maxHits: 3 });
        assert.deepEqual(found.matches[0]!.hits.map((h) => h.page), [4, 6, 2]);
        assert.match(found.matches[0]!.hits[0]!.snippet, /\[\[marimba\]\]/i);
      });
    });

    test("words must all be found; phrases keep their order; exclusions remove", async () => {
      assert.deepEqual(await titles("xylophone spring"), ["Annual report"]);
      assert.deepEqual(await titles("xylophone autumn"), []);
      assert.deepEqual(await titles('"xylophone orchestra"'), ["Annual report"]);
      assert.deepEqual(await titles('"orchestra xylophone"'), []);
      assert.deepEqual((await titles("lighthouse")).sort(), ["Lighthouse keepers", "Maritime notes", "Secret plans"]);
      assert.deepEqual(await titles("lighthouse -rock -treasure"), ["Lighthouse keepers"]);
      assert.deepEqual(await titles('lighthouse -"keeper wrote" -"treasure map"'), ["Lighthouse keepers"]);
      assert.deepEqual(await titles("-lighthouse"), [], "exclusions alone find nothing");
    });

    test("a phrase of three or more words is found whole only, not from its pairs apart", async () => {
      await withDocuments([[{ title: "Weather log", tags: ["storm front", "rain gauge"] }, [
        "The storm front moved east. Later the front moved north again.",
        "Then a cold storm front moved over the bay.",
      ]]], async () => {
        assert.deepEqual(await titles('"storm front moved"'), ["Weather log"]);
        assert.deepEqual(await titles('"cold storm front moved over"'), ["Weather log"]);
        // "front moved north" is there; "storm front" and "front moved" are too, but never "storm front moved north".
        assert.deepEqual(await titles('"storm front moved north"'), []);
        assert.deepEqual(await titles('"front moved north"'), ["Weather log"]);
        assert.deepEqual(await titles('storm -"storm front moved north"'), ["Weather log"]);
        assert.deepEqual(await titles('storm -"storm front moved east"'), []);
        assert.deepEqual(await titles('"front rain"'), [], "a phrase never runs from one tag into the next");
        assert.deepEqual(await titles('"rain gauge"'), ["Weather log"]);
      });
    });

    test("a phrase of three or more words never runs from one field or tag into the next", async () => {
      await withDocuments([
        [{ title: "Tag log", tags: ["heron front", "moved east"] }, ["the front moved"]],
        [{ title: "Watching heron", tags: ["front moved"] }, ["a heron front came"]],
      ], async () => {
        assert.deepEqual(await titles('"heron front moved"'), [], "each pair is there, the phrase is not");
        assert.deepEqual((await titles('heron -"heron front moved"')).sort(), ["Tag log", "Watching heron"]);
        assert.deepEqual(await titles('"heron front came"'), ["Watching heron"]);
      });
    });

    test("inside quotes a word matches only itself; outside, its other forms too", async () => {
      // Stemmed by porter on SQLite; on PostgreSQL by the document's language (none here: not stemmed).
      if (dialect.name === "sqlite") assert.deepEqual((await titles("keepers")).sort(), ["Lighthouse keepers", "Maritime notes"]);
      assert.deepEqual(await titles('"lighthouse keeper"'), ["Maritime notes"]);
      assert.deepEqual(await titles('"lighthouse keepers"'), ["Lighthouse keepers"]);
      assert.deepEqual((await titles('lighthouse -"lighthouse keepers"')).sort(), ["Maritime notes", "Secret plans"]);
    });

    test("case and accents do not matter, either way", async () => {
      for (const q of ["cafe creme", "CAFÉ CRÈME", "Café", '"cafe creme"']) assert.deepEqual(await titles(q), ["Maritime notes"], q);
    });

    test("a phrase and its words fold alike, in every script, as the engine folds its words", async () => {
      await withDocuments([[{ title: "Scripts" }, [
        "Йод и соль в воде. Ἀθῆναι εἶναι πόλη. Die Straße der Stadt.",
      ]]], async () => {
        assert.deepEqual(await titles('"Йод и соль"'), ["Scripts"]);
        assert.deepEqual(await titles('"ЙОД И СОЛЬ В"'), ["Scripts"], "case");
        // Neither engine takes the breve off Й: the word and the phrase without it find nothing alike.
        assert.deepEqual(await titles("иод"), []);
        assert.deepEqual(await titles('"иод и соль"'), []);
        // Greek accents and ß: kept by FTS5, folded by PostgreSQL's unaccent; words and phrases agree either way.
        const folded = dialect.name === "postgres" ? ["Scripts"] : [];
        assert.deepEqual(await titles("αθηναι"), folded);
        assert.deepEqual(await titles('"αθηναι ειναι πολη"'), folded);
        assert.deepEqual(await titles("strasse"), folded);
        assert.deepEqual(await titles('"die strasse der"'), folded);
        assert.deepEqual(await titles('"ἀθῆναι εἶναι πόλη"'), ["Scripts"]);
        assert.deepEqual(await titles('"die straße der stadt"'), ["Scripts"]);
      });
    });

    test("a title match ranks before a text match", async () => {
      const { matches } = await search("lighthouse", { access: "public" });
      assert.deepEqual(matches.map((m) => m.record.title), ["Lighthouse keepers", "Maritime notes"]);
      assert.ok(matches[0]!.score > matches[1]!.score);
      assert.deepEqual(matches[1]!.hits.map((h) => h.page), [1]);
      assert.deepEqual(await titles("coast"), ["Lighthouse keepers"], "tags are searched");
    });

    test("a title that holds one word of the query still ranks before a text that holds them all", async () => {
      await withDocuments([
        [{ title: "Quagga" }, ["A note on the okapi."]],
        [{ title: "Notes" }, ["The quagga and the okapi."]],
      ], async () => {
        const { matches } = await search("quagga okapi");
        assert.deepEqual(matches.map((m) => m.record.title), ["Quagga", "Notes"]);
        assert.ok(matches[0]!.score > 0 && matches[1]!.score === 0);
      });
    });

    test("a phrase of common short words is a phrase like any other", async () => {
      await withDocuments([[{ title: "Hamlet", language: "en" }, ["To be, or not to be, that is the question."]]], async () => {
        assert.deepEqual(await titles('"to be or not to be"'), ["Hamlet"]);
        assert.deepEqual(await titles('"that is the question"'), ["Hamlet"]);
        assert.deepEqual(await titles('"to be or not to go"'), []);
        assert.deepEqual(await titles('question -"not to be"'), []);
      });
    });

    test("numbers and addresses written with points are found as written", async () => {
      await withDocuments([[{ title: "Constants" }, [
        "Pi is about 3.14159 and e about 2.71828. Write to pi.desk@example.org or see www.example.org/pi.",
      ]]], async () => {
        assert.deepEqual(await titles("3.14159"), ["Constants"]);
        assert.deepEqual(await titles('"about 2.71828"'), ["Constants"]);
        assert.deepEqual(await titles("3.14158"), []);
        assert.deepEqual(await titles("pi.desk@example.org"), ["Constants"]);
        assert.deepEqual(await titles('"to pi.desk@example.org"'), ["Constants"]);
        assert.deepEqual(await titles("www.example.org"), ["Constants"]);
        assert.deepEqual(await titles("pi.desk@example.com"), []);
      });
    });

    test("scopes: own documents only, private ones absent from public search, states as asked", async () => {
      assert.ok(!(await titles("lighthouse")).includes("Bob's lighthouse"));
      assert.ok((await titles("treasure")).includes("Secret plans"), "the owner finds a private document");
      assert.deepEqual(await titles("treasure", { access: "public" }), []);
      assert.deepEqual(await titles("treasure", { kind: "public" }), []);
      assert.deepEqual((await titles("lighthouse", { kind: "public" })).sort(), ["Bob's lighthouse", "Lighthouse keepers", "Maritime notes"]);
      assert.deepEqual(await titles("lighthouse", { kind: "public", accountId: bob }), ["Bob's lighthouse"]);
      assert.deepEqual(await titles("draft"), []);
      assert.deepEqual(await titles("draft", { states: ["P"] }), ["Lighthouse draft"]);
    });

    test("an update is searchable at once; making a document private hides it from public search", async () => {
      await store.documents.update(alice, ids.titled!, { title: "Harbour keepers", updatedAt: Date.now() });
      assert.deepEqual(await titles("harbour", { kind: "public" }), ["Harbour keepers", "Maritime notes"]);
      await store.documents.update(alice, ids.titled!, { access: "private", updatedAt: Date.now() });
      assert.deepEqual(await titles("harbour", { kind: "public" }), ["Maritime notes"]);
      assert.deepEqual(await titles("harbour"), ["Harbour keepers", "Maritime notes"]);
    });

    test("a deleted document is gone at once, its pages with it", async () => {
      await store.documents.deleteByNames(alice, [ids.long!]);
      assert.deepEqual(await titles("xylophone"), []);
    });

    test("paging: startIndex and pageSize window the ranked list; totalCount counts all", async () => {
      const all = await search("lighthouse", { kind: "public" });
      const second = await store.search.search({
        query: parseSearchQuery("lighthouse"), scope: { kind: "public" }, startIndex: 1, pageSize: 1, maxHits: 5,
      });
      assert.equal(second.totalCount, all.totalCount);
      assert.deepEqual(second.matches.map((m) => m.record.documentId), [all.matches[1]!.record.documentId]);
      const beyond = await store.search.search({ query: parseSearchQuery("lighthouse"), scope: { kind: "public" }, startIndex: 50, pageSize: 1, maxHits: 5 });
      assert.equal(beyond.totalCount, all.totalCount);
      assert.deepEqual(beyond.matches, []);
    });

    test("many matches: those ranked by their title first, then the rest in documentId order, in any window", async () => {
      // Enough matches that a window is a small part of them.
      const carol = (await seedAccount(store, "carol", "c".repeat(32), "s".repeat(32), 1));
      for (let i = 0; i < 320; i++) {
        const title = i % 100 === 7 ? `Zebrafish log ${i}` : `Fish log ${i}`;
        await publishWithText(store, newStoreDoc(carol, "carol", { title }), [`A page about the zebrafish, number ${i}.`]);
      }
      const window = (startIndex: number, pageSize: number) =>
        store.search.search({ query: parseSearchQuery("zebrafish"), scope: { kind: "account", accountId: carol, states: ["A"] }, startIndex, pageSize, maxHits: 1 });
      const all: Array<{ id: string; title: string; score: number }> = [];
      for (let start = 0; start < 320; start += 7) {
        const page = await window(start, 7);
        assert.equal(page.totalCount, 320);
        all.push(...page.matches.map((m) => ({ id: m.record.documentId, title: m.record.title, score: m.score })));
      }
      assert.equal(new Set(all.map((m) => m.id)).size, 320, "every match once");
      assert.deepEqual(all.slice(0, 4).map((m) => m.title).sort(), ["Zebrafish log 107", "Zebrafish log 207", "Zebrafish log 307", "Zebrafish log 7"]);
      assert.ok(all.slice(0, 4).every((m, i) => m.score > 0 && (i === 0 || m.score <= all[i - 1]!.score)));
      const rest = all.slice(4);
      assert.ok(rest.every((m) => m.score === 0));
      assert.deepEqual(rest.map((m) => m.id), rest.map((m) => m.id).sort(), "the rest in documentId order");
      assert.deepEqual((await window(1, 5)).matches.map((m) => m.record.documentId), all.slice(1, 6).map((m) => m.id), "a window across the ranked and the rest");
      assert.deepEqual((await window(318, 10)).matches.map((m) => m.record.documentId), all.slice(318).map((m) => m.id));
      assert.deepEqual((await window(320, 10)).matches, []);
      assert.equal((await window(0, 0)).totalCount, 320);
      assert.deepEqual((await window(0, 3)).matches[0]!.hits.map((h) => h.page), [1]);
    });

    test("a document deleted between the window and the read of its row is left out, not an error", async () => {
      const rows = await windowRows(dbOf(store), [
        { k: 1, documentId: ids.body!, score: 0 },
        { k: 2, documentId: "260101000000-00000000000000000000000000000000", score: 0 },
      ]);
      assert.deepEqual(rows.map((r) => r.documentId), [ids.body]);
    });

    test("hostile queries are only words to the engines", async () => {
      for (const q of ['"', "-", "NEAR(a b)", "a* OR b", "' or 1=1 --", "lighthouse:*", "col:lighthouse", "(((", "\u0000", "title:x"]) {
        await search(q); // must not throw
      }
      assert.deepEqual(await titles("lighthouse OR xyzzy"), [], "OR is a word here, not an operator");
    });
  });
}
