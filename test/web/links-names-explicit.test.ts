import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { imageVersion } from "../../src/web/document-paths.ts";
import { givePassword, signInHttp, TEST_APP_ENV } from "../helpers/app-client.ts";
import { READER_FIXTURE, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/**
 * Issue 26 items 2-4 over HTTP, on documents the real pipeline converted: a cleared description
 * stays empty everywhere; an explicit document shows nothing of itself before consent; a renamed
 * document's old addresses redirect for good, until another document takes the name.
 */

const ONE_PAGE = "pdf-quartz-firefox-1page.pdf";

describe("links, names and explicit documents", { timeout: 240_000 }, () => {
  let fx: WebFixture;
  let base: string;
  let explicitDoc: DocumentRecord;
  let plain: DocumentRecord;
  const get = (path: string, init: RequestInit = {}) => fetch(base + path, { redirect: "manual", ...init });
  const text = async (path: string) => {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    return res.text();
  };
  const ok = (params: Record<string, string>) => fx.client.ok("document.update", params);

  before(async () => {
    fx = await startWebFixture({ ...TEST_APP_ENV });
    base = fx.server.url;
    await givePassword(fx.server, "tester");
    explicitDoc = await fx.publish(READER_FIXTURE, { title: "Specimen after dark", description: "Words only an adult should read", tags: "night,adult", explicit: "true" });
    plain = await fx.publish(ONE_PAGE, { title: "Plain flyer", description: "A plain description" });
    for (const d of [explicitDoc, plain]) assert.equal(d.state, "A", `${d.errorCode} ${d.errorMessage}`);
  });
  after(async () => {
    await fx?.close();
  });

  describe("explicit documents (item 3)", () => {
    const cover = () => `/tester/docs/${explicitDoc.name}/cover/`;

    test("the reader: title and warning only, no description, tags, search or page; no og:image, og:description or large card", async () => {
      const page = await text(`/tester/docs/${explicitDoc.name}`);
      assert.match(page, /marked as explicit/);
      for (const hidden of ["Words only an adult", "doc-description", "doc-tags", "og:image", "og:description", "twitter:image", "twitter:description", "summary_large_image", 'name="description"', "/cover/", "/pages/", 'class="search"']) {
        assert.ok(!page.includes(hidden), `before consent: ${hidden}`);
      }
      assert.match(page, /<meta name="twitter:card" content="summary">/);
      // A search in the address shows no snippet either.
      const searched = await text(`/tester/docs/${explicitDoc.name}?q=zapfdingbats`);
      assert.ok(!/zapfdingbats<\/mark>|Page 14<\/a>:/i.test(searched), "no snippet before consent");
      // After consent: the document, its description and tags; the meta tags still tell social sites nothing more.
      const consented = await text(`/tester/docs/${explicitDoc.name}?consent=1`);
      assert.match(consented, /<p class="doc-description">Words only an adult should read<\/p>/);
      assert.match(consented, /\/pages\/w\d+\/1\?v=/);
      assert.ok(!consented.includes("og:image") && !consented.includes("og:description"));
    });

    test("the embed shows the warning; oEmbed gives no thumbnail", async () => {
      const embed = await text(`/tester/docs/${explicitDoc.name}/embed`);
      assert.match(embed, /marked as explicit/);
      assert.ok(!embed.includes("/pages/") && !embed.includes("/cover/"));
      const url = encodeURIComponent(`${base}/tester/docs/${explicitDoc.name}`);
      const o = (await (await get(`/oembed?url=${url}&format=json`)).json()) as Record<string, unknown>;
      assert.equal(o.type, "rich");
      assert.equal(o.thumbnail_url, undefined);
      const xml = await text(`/oembed?url=${url}&format=xml`);
      assert.ok(!xml.includes("thumbnail") && !xml.includes("/cover/"));
      // A document that is not explicit keeps its thumbnail.
      const po = (await (await get(`/oembed?url=${encodeURIComponent(`${base}/tester/docs/${plain.name}`)}&format=json`)).json()) as Record<string, unknown>;
      assert.match(String(po.thumbnail_url), /\/cover\/medium\.jpg/);
    });

    test("profile, /search and /<user>?q=: the title, never the cover, snippet or description", async () => {
      const profile = await text("/tester");
      assert.ok(profile.includes("Specimen after dark"));
      assert.ok(!profile.includes(cover()), "no cover on the profile");
      assert.match(profile, /cover-withheld/);
      assert.ok(profile.includes(`/tester/docs/${plain.name}/cover/medium.jpg`), "other covers stay");
      for (const path of ["/search?q=zapfdingbats", "/tester?q=zapfdingbats", "/search?q=specimen", "/search?q=adult"]) {
        const body = await text(path);
        assert.match(body, /Specimen after dark/, path);
        assert.ok(!body.includes(cover()), `${path}: no cover`);
        assert.ok(!/<mark>/i.test(body), `${path}: no snippet`);
        assert.ok(!body.includes("Words only an adult"), `${path}: no description`);
        assert.match(body, /marked as explicit/, path);
      }
    });

    test("the sitemap lists the address and nothing of the content", async () => {
      const sitemap = await text("/sitemap.xml");
      assert.ok(sitemap.includes(`/tester/docs/${explicitDoc.name}</loc>`));
      assert.ok(!sitemap.includes("image:") && !sitemap.includes("/cover/"));
    });
  });

  describe("clearing a description and tags (item 2)", () => {
    test("the app's form clears them; the reader, its meta tags and the share card stay empty", async () => {
      const session = await signInHttp(base, "tester");
      const page = await (await session.get(`/app/documents/${plain.documentId}`)).text();
      assert.match(page, /An emptied description, tags, info link or sound is removed/);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
      const fields: Record<string, string> = {
        _csrf: csrf, title: "Plain flyer", description: "", tags: "", newName: plain.name, access: "public",
        language: "", category: "000000", type: "000000", publishDate: new Date(plain.publishDate).toISOString().slice(0, 10),
        infoLink: "", soundUrl: "", commentsAllowed: "true", ratingsAllowed: "true",
      };
      const saved = await session.post(`/app/documents/${plain.documentId}`, fields);
      assert.equal(saved.status, 303);
      assert.match(saved.headers.get("location")!, /done=saved/);
      const rec = (await fx.server.services.store.documents.getById(plain.accountId, plain.documentId))!;
      assert.equal(rec.description, "");
      const reader = await text(`/tester/docs/${plain.name}`);
      for (const gone of ["A plain description", "doc-description", "og:description", 'name="description"', "twitter:description"]) assert.ok(!reader.includes(gone), gone);
      assert.match(reader, /og:image/, "the card keeps its cover");
      const share = await (await session.get(`/app/documents/${plain.documentId}/share`)).text();
      assert.ok(!share.includes("og-description") && !share.includes("A plain description"));
      // Saving the form again with nothing changed is "nothing was changed", not a clear of what is already empty.
      const again = await session.post(`/app/documents/${plain.documentId}`, { ...fields, _csrf: await session.refreshCsrf() });
      assert.match(again.headers.get("location")!, /done=unchanged/);
    });
  });

  describe("renaming keeps old links (item 4)", () => {
    test("every address with the old name redirects (301) to the same address with the new one", async () => {
      const doc = await fx.publish(ONE_PAGE, { title: "Moving house", name: "moving-house", downloadable: "true" });
      const e = (await fx.client.ok("document_embed.add", { documentId: doc.documentId })).documentEmbed as { id: number };
      await ok({ name: "moving-house", newName: "new-house" });
      const v = imageVersion(doc);
      const cases: Array<[string, string]> = [
        ["/tester/docs/moving-house", "/tester/docs/new-house"],
        ["/tester/docs/moving-house?q=x", "/tester/docs/new-house?q=x"],
        [`/tester/docs/moving-house/embed?embed=${e.id}&page=1`, `/tester/docs/new-house/embed?embed=${e.id}&page=1`],
        [`/tester/docs/moving-house/pages/read/1.jpg?v=${v}`, `/tester/docs/new-house/pages/read/1.jpg?v=${v}`],
        [`/tester/docs/moving-house/pages/thumb/1.jpg?v=${v}`, `/tester/docs/new-house/pages/thumb/1.jpg?v=${v}`],
        [`/tester/docs/moving-house/pages/w400/1?v=${v}`, `/tester/docs/new-house/pages/w400/1?v=${v}`],
        [`/tester/docs/moving-house/cover/large.jpg?v=${v}`, `/tester/docs/new-house/cover/large.jpg?v=${v}`],
        [`/tester/docs/moving-house/text/1.json?v=${v}`, `/tester/docs/new-house/text/1.json?v=${v}`],
        ["/tester/docs/moving-house/text.json", "/tester/docs/new-house/text.json"],
        ["/tester/docs/moving-house/search.json?q=x", "/tester/docs/new-house/search.json?q=x"],
        ["/tester/docs/moving-house/state.json", "/tester/docs/new-house/state.json"],
        ["/tester/docs/moving-house/download", "/tester/docs/new-house/download"],
        ["/tester/docs/moving-house/comments", "/tester/docs/new-house/comments"],
      ];
      for (const [from, to] of cases) {
        const res = await get(from);
        assert.equal(res.status, 301, from);
        assert.equal(res.headers.get("location"), to, from);
        assert.equal((await get(to)).status, 200, to);
      }
      // HEAD too; a reader's rating form sent to the old address goes on as a POST (308).
      assert.equal((await get("/tester/docs/moving-house", { method: "HEAD" })).status, 301);
      const rating = await get("/tester/docs/moving-house/rating", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "stars=5" });
      assert.equal(rating.status, 308);
      assert.equal(rating.headers.get("location"), "/tester/docs/new-house/rating");
      // oEmbed of the old address answers the document at its new address.
      const o = (await (await get(`/oembed?url=${encodeURIComponent(`${base}/tester/docs/moving-house`)}&format=json`)).json()) as { html: string };
      assert.ok(o.html.includes(`${base}/tester/docs/new-house/embed`), o.html);
      // Renamed again: the first name goes straight to the newest.
      await ok({ name: "new-house", newName: "newest-house" });
      assert.equal((await get("/tester/docs/moving-house")).headers.get("location"), "/tester/docs/newest-house");
      assert.equal((await get("/tester/docs/new-house/embed")).headers.get("location"), "/tester/docs/newest-house/embed");
      // Another document takes the first name: the address is its own now.
      const taker = await fx.publish(ONE_PAGE, { title: "Taker", name: "moving-house" });
      const page = await get("/tester/docs/moving-house");
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<h1 class="doc-title">Taker<\/h1>/);
      // Hostile or unknown names are plain 404s, and another user's path finds nothing.
      for (const path of ["/tester/docs/never-was", "/other/docs/new-house", "/tester/docs/new-house%3Cscript%3E", "/tester/docs/new-house%00", "/tester/docs/NEW-HOUSE"]) {
        assert.equal((await get(path)).status, 404, path);
      }
      // Deleted: its old names lead nowhere.
      await fx.client.ok("document.delete", { names: "newest-house" });
      for (const path of ["/tester/docs/new-house", "/tester/docs/newest-house"]) assert.equal((await get(path)).status, 404, path);
      assert.equal((await get("/tester/docs/moving-house")).status, 200, "the taker keeps its name");
      await fx.client.ok("document.delete", { names: taker.name });
    });

    test("the edit form says old links keep working", async () => {
      const session = await signInHttp(base, "tester");
      const page = await (await session.get(`/app/documents/${plain.documentId}`)).text();
      assert.match(page, /After a rename, links and embed codes with the old name still work/);
    });
  });
});
