import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { createAccount } from "../../src/accounts/account-admin.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { seedDoc } from "../helpers/api-seed.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { READER_FIXTURE, READER_FIXTURE_PAGES, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/** The public pages over HTTP (decisions §10), on a document converted by the real pipeline. */
describe("public pages", { timeout: 120_000 }, () => {
  let fx: WebFixture;
  let doc: DocumentRecord;
  let failed: DocumentRecord;
  let pending: DocumentRecord;
  let base: string;

  const get = (path: string, headers: Record<string, string> = {}) => fetch(base + path, { headers, redirect: "manual" });
  const text = async (path: string) => {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    return res.text();
  };
  const update = (fields: Record<string, string>) => fx.client.ok("document.update", { name: doc.name, ...fields });
  const readerPath = () => `/${doc.username}/docs/${doc.name}`;

  before(async () => {
    fx = await startWebFixture();
    base = fx.server.url;
    doc = await fx.publish(READER_FIXTURE, { title: "Sample fonts", downloadable: "true", tags: "fonts,tables" });
    assert.equal(doc.state, "A", `${doc.errorCode} ${doc.errorMessage}`);
    failed = await fx.publish("bad/pdf-corrupt-no-trailer.pdf", { title: "Broken file" });
    assert.equal(failed.state, "F");
    await fx.stopWorker();
    pending = await fx.uploadPending(READER_FIXTURE, { title: "Still converting" });
  });
  after(async () => {
    await fx?.close();
  });

  test("the reader serves every page image and its text in the HTML, under the document's address only", async () => {
    const res = await get(readerPath());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    const body = await res.text();
    const images = [...body.matchAll(/<img src="([^"]+)"[^>]*alt="Page (\d+)"/g)];
    assert.equal(images.length, READER_FIXTURE_PAGES);
    for (const [, src, n] of images) {
      // One address per width (issue 30): the browser picks from srcset, the server the format from Accept.
      assert.match(src!, new RegExp(`^/tester/docs/${doc.name}/pages/w800/${n}\\?v=[0-9a-f]{12}$`));
    }
    // The first page is in the HTML and loads at once; the others as they come into view.
    assert.doesNotMatch(body.match(/<img[^>]*alt="Page 1"[^>]*>/)![0], /loading="lazy"/);
    assert.match(body.match(/<img[^>]*alt="Page 2"[^>]*>/)![0], /loading="lazy"/);
    assert.match(body, /FONT: timesBI/, "page text is in the HTML for readers without script");
    assert.ok(!body.includes(doc.blobId), "the blob id never reaches a page");
    assert.match(body, /<h1 class="doc-title">Sample fonts<\/h1>/);
    assert.match(body, /<li>fonts<\/li><li>tables<\/li>/);
    assert.match(body, new RegExp(`<link rel="canonical" href="${base}/tester/docs/${doc.name}">`));
    assert.match(body, /<meta property="og:image" content="http:\/\/[^"]+\/cover\/large\.jpg\?v=/);
    assert.match(body, /<meta name="twitter:card" content="summary_large_image">/);
    assert.doesNotMatch(body, /noindex/);

    for (const [, src] of images.slice(0, 2)) {
      const img = await get(src!);
      assert.equal(img.status, 200);
      assert.equal(img.headers.get("content-type"), "image/jpeg");
      assert.equal(img.headers.get("cache-control"), "public, max-age=31536000, immutable");
      assert.deepEqual([...new Uint8Array(await img.arrayBuffer()).slice(0, 2)], [0xff, 0xd8]);
    }
    const p = `/tester/docs/${doc.name}`;
    assert.equal((await get(`${p}/pages/read/${READER_FIXTURE_PAGES + 1}.jpg`)).status, 404);
    assert.equal((await get(`${p}/pages/huge/1.jpg`)).status, 404);
    assert.equal((await get(`${p}/pages/read/0.jpg`)).status, 404);
    assert.equal((await get(`${p}/pages/read/..%2f..%2foriginal`)).status, 404);
    assert.equal((await get(`${p}/cover/medium.jpg`)).status, 200);
    const textJson = (await (await get(`${p}/text.json`)).json()) as Array<{ page: number; words: unknown[] }>;
    assert.equal(textJson.length, READER_FIXTURE_PAGES);
    assert.ok(textJson[0]!.words.length > 0);
  });

  test("pages carry a strict CSP, refuse framing and answer 304 to a matching ETag", async () => {
    const res = await get(readerPath());
    const csp = res.headers.get("content-security-policy")!;
    for (const d of ["default-src 'none'", "img-src 'self'", "style-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) {
      assert.ok(csp.includes(d), d);
    }
    assert.equal(res.headers.get("x-frame-options"), "DENY");
    const body = await res.text();
    // One script: the fixed loader of the reader's file, allowed by its hash alone (no 'self', no nonce
    // in a cached page); no style attributes or blocks, no event handler attributes.
    const scripts = [...body.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.equal(scripts[0]![1], "");
    // It adds the reader's bundle and the ratings and comments' script (src/web/reader-comments.ts) and the statistics' beacons (reader-stats.js), named in it.
    assert.match(scripts[0]![2]!, /^\(\(\)=>\{for\(const u of \["\/_assets\/reader\.[0-9a-f]{16}\.js","\/_assets\/reader-feedback\.[0-9a-f]{16}\.js","\/_assets\/reader-stats\.[0-9a-f]{16}\.js"\]\)/);
    const hash = createHash("sha256").update(scripts[0]![2]!).digest("base64");
    assert.match(csp, new RegExp(`script-src 'sha256-${hash.replace(/[+/]/g, "\\$&")}' 'strict-dynamic';`));
    assert.doesNotMatch(body, /<style|\sstyle=|\son[a-z]+=/i);

    const etag = res.headers.get("etag")!;
    assert.ok(etag);
    const again = await get(readerPath(), { "if-none-match": etag });
    assert.equal(again.status, 304);
    // fetch asks for gzip and unpacks it; a client that does not gets the same page plain, under its own tag.
    assert.equal(res.headers.get("content-encoding"), "gzip");
    const plain = await get(readerPath(), { "accept-encoding": "identity" });
    assert.equal(plain.headers.get("content-encoding"), null);
    assert.equal(await plain.text(), body);
    assert.notEqual(plain.headers.get("etag"), etag);
    assert.equal((await get(`/${doc.username}`, { "if-none-match": etag })).status, 200, "another page, another tag");

    const js = body.match(/"(\/_assets\/reader\.[0-9a-f]{16}\.js)"/)![1]!;
    const css = body.match(/<link rel="stylesheet" href="(\/_assets\/[^"]+)"/)![1]!;
    for (const asset of [js, css]) {
      const a = await get(asset);
      assert.equal(a.status, 200);
      assert.equal(a.headers.get("cache-control"), "public, max-age=31536000, immutable");
    }
    assert.equal((await get("/_assets/reader.0000000000000000.js")).status, 404);

    for (const path of [`/${doc.username}`, `/${doc.username}/docs/${pending.name}`, `/${doc.username}/docs/${failed.name}`, "/nobody-here"]) {
      const r = await get(path);
      assert.match(r.headers.get("content-security-policy")!, /frame-ancestors 'none'/, path);
      assert.equal(r.headers.get("x-frame-options"), "DENY", path);
    }
  });

  test("the embed page may be framed and starts at its embed's page", async () => {
    const embed = (await fx.client.ok("document_embed.add", { documentId: doc.documentId, readerStartPage: "5" })).documentEmbed as { id: number };
    const res = await get(`${readerPath()}/embed?embed=${embed.id}&page=5`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-security-policy")!, /frame-ancestors \*/);
    assert.equal(res.headers.get("x-frame-options"), null);
    const body = await res.text();
    assert.match(body, /data-start-page="5"/);
    assert.match(body, /data-embed="1"/);
    assert.doesNotMatch(body, /class="doc-head"/, "the reader alone");
    assert.match(await text(`${readerPath()}/embed?page=3`), /data-start-page="3"/);
    // A page past the end, and an unknown embed, are sent to the page's address as the document is now (302).
    const past = await get(`${readerPath()}/embed?page=999`);
    assert.equal(past.status, 302);
    assert.equal(past.headers.get("location"), `${readerPath()}/embed?page=${READER_FIXTURE_PAGES}`);
    assert.match(await text(past.headers.get("location")!), new RegExp(`data-start-page="${READER_FIXTURE_PAGES}"`));
    const unknown = await get(`${readerPath()}/embed?embed=999999&page=2`);
    assert.equal(unknown.status, 302);
    assert.equal(unknown.headers.get("location"), `${readerPath()}/embed?page=2`, "an unknown embed is left out");
  });

  test("the original downloads only while downloadable; otherwise no address serves it", async () => {
    const res = await get(`${readerPath()}/download`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/pdf");
    assert.match(res.headers.get("content-disposition")!, /^attachment; filename="pdf-tcpdf-14pages\.pdf"/);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), await readFile(join(FIXTURES, READER_FIXTURE)));

    await update({ downloadable: "false" });
    try {
      assert.equal((await get(`${readerPath()}/download`)).status, 404);
      const body = await text(readerPath());
      assert.doesNotMatch(body, /\/download"/, "no download button");
      for (const path of [`${readerPath()}/original`, `${readerPath()}/document.pdf`, `${readerPath()}/pages/read/original`]) {
        assert.equal((await get(path)).status, 404, path);
      }
    } finally {
      await update({ downloadable: "true" });
    }
    assert.equal((await get(`/${doc.username}/docs/${pending.name}/download`)).status, 404, "not before it is published");
  });

  test("a private document works by its address with noindex, and is in no listing or sitemap", async () => {
    const listed = async () => ({
      profile: (await text(`/${doc.username}`)).includes(`/docs/${doc.name}"`),
      sitemap: (await text("/sitemap.xml")).includes(`/docs/${doc.name}<`),
    });
    assert.deepEqual(await listed(), { profile: true, sitemap: true });
    await update({ access: "private" });
    try {
      // made private, its title-based name gives way to its documentId (decisions §5)
      assert.equal((await get(readerPath())).status, 404);
      const res = await get(`/${doc.username}/docs/${doc.documentId}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-robots-tag"), "noindex, nofollow");
      const body = await res.text();
      assert.match(body, /<meta name="robots" content="noindex, nofollow">/);
      assert.doesNotMatch(body, /og:title/, "no sharing card for an unlisted document");
      const image = await get(body.match(/<img src="([^"]+)"/)![1]!);
      assert.equal(image.status, 200);
      assert.equal(image.headers.get("x-robots-tag"), "noindex, nofollow");
      assert.deepEqual(await listed(), { profile: false, sitemap: false });
    } finally {
      await fx.client.ok("document.update", { name: doc.documentId, access: "public", newName: doc.name });
    }
    // Documents not published are in no listing either.
    const profile = await text(`/${doc.username}`);
    assert.ok(!profile.includes(pending.name) && !profile.includes(failed.name));
    assert.match(await text("/robots.txt"), /Sitemap: http:\/\/.+\/sitemap\.xml/);
  });

  test("a hostile title, description and tags render as text on every page", async () => {
    const evil = `<script>alert(1)</script>"'</title>\u202Egnp.exe&amp;`;
    await update({ title: evil, description: `${evil} <img src=x onerror=alert(2)>`, tags: `<b>bold</b>,"quoted",</title>` });
    try {
      const embed = (await fx.client.ok("document_embed.add", { documentId: doc.documentId })).documentEmbed as { id: number };
      for (const path of [readerPath(), `${readerPath()}/embed?embed=${embed.id}&page=1`, `/${doc.username}`, `${readerPath()}?q=${encodeURIComponent(evil)}`]) {
        const body = await text(path);
        assert.equal(body.match(/<script/g)?.length, 1, `${path}: only the loader is a script`);
        assert.equal(body.match(/<\/title>/g)?.length, 1, path);
        assert.doesNotMatch(body, /<img src=x|<b>bold|\u202E/, path);
        assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&#39;&lt;\/title&gt;gnp\.exe&amp;amp;/, path);
      }
      const reader = await text(readerPath());
      assert.match(reader, /<li>&lt;b&gt;bold&lt;\/b&gt;<\/li><li>&quot;quoted&quot;<\/li><li>&lt;\/title&gt;<\/li>/);
    } finally {
      await update({ title: "Sample fonts", description: "Font tables", tags: "fonts,tables" });
    }
  });

  test("P shows a page that refreshes itself, F a plain notice; neither is indexed nor serves images", async () => {
    const p = await text(`/${doc.username}/docs/${pending.name}`);
    // Script polls the state and reloads once; without script a timed refresh does it.
    assert.match(p, /<noscript><meta http-equiv="refresh" content="\d+"><\/noscript>/);
    assert.match(p, new RegExp(`data-poll="/tester/docs/${pending.name}/state.json"`));
    assert.deepEqual(await (await get(`/tester/docs/${pending.name}/state.json`)).json(), { state: "P" });
    assert.match(p, /being processed/);
    assert.match(p, /noindex/);
    const f = await text(`/${doc.username}/docs/${failed.name}`);
    assert.match(f, /could not be published/);
    assert.match(f, /noindex/);
    assert.doesNotMatch(f, /http-equiv="refresh"/);
    for (const d of [pending, failed]) {
      assert.equal((await get(`/${doc.username}/docs/${d.name}/pages/read/1.jpg`)).status, 404);
      assert.equal((await get(`/${doc.username}/docs/${d.name}/text.json`)).status, 404);
    }
  });

  test("search without script lists the pages holding every word, linked to them", async () => {
    const body = await text(`${readerPath()}?q=${encodeURIComponent("FONT timesbi")}`);
    assert.match(body, /1 page with “FONT timesbi”/);
    assert.match(body, /<a href="#page=12" data-page="12">Page 12<\/a>/);
    assert.match(body, /id="page=12"/, "the link's target exists without script");
    assert.match(await text(`${readerPath()}?q=nothing-like-this`), /No page contains/);
  });

  test("unknown addresses, reserved names and the API's own paths are not taken for users", async () => {
    for (const path of ["/nobody-here", "/tester/docs/no-such-doc", "/1_0/docs/x", "/sitemap.xml/docs/x", "/tester/docs/x/pages/read/1.jpg", "/UPPER"]) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get("content-type")!, /^text\/html/, path);
    }
    // A document's first address, its documentId, leads to its page once it has a name of its own.
    const byId = await get(`/tester/docs/${doc.documentId}?q=x`);
    assert.equal(byId.status, 302);
    assert.equal(byId.headers.get("location"), `${readerPath()}?q=x`);
    assert.equal((await get(`/other-user/docs/${doc.documentId}`)).status, 404);
    for (const reserved of ["1_0", "upload", "sitemap.xml", "robots.txt", "_assets", "metrics", "healthz"]) {
      await assert.rejects(createAccount(fx.server.services.store, reserved), /reserved/, reserved);
    }
    // The API still answers on its own path.
    const api = await get("/1_0?action=svc.documents.list&format=json");
    assert.match(api.headers.get("content-type")!, /json/);
    assert.equal((await get("/sitemap.xml")).headers.get("content-type"), "application/xml; charset=utf-8");
  });
  test("an explicit document shows a notice first; its audio and information link are offered", async () => {
    await update({ explicit: "true", soundUrl: "https://sounds.example/intro.mp3", infoLink: "https://info.example/about" });
    try {
      const notice = await text(readerPath());
      assert.match(notice, /marked as explicit/);
      assert.doesNotMatch(notice, /\/pages\//, "no page image before the reader agrees");
      const consent = notice.match(/<a class="button" href="(\?[^"]*consent=1[^"]*)"/)![1]!;
      const res = await get(readerPath() + consent.replace(/&amp;/g, "&"));
      const body = await res.text();
      assert.equal(body.match(/<img src="[^"]*\/pages\/w800\/\d+\?v=/g)?.length, READER_FIXTURE_PAGES);
      assert.match(body, /<audio class="doc-sound" controls preload="none" src="https:\/\/sounds\.example\/intro\.mp3">/);
      assert.match(body, /<a href="https:\/\/info\.example\/about" rel="noopener nofollow ugc">/);
      assert.match(res.headers.get("content-security-policy")!, /media-src https:\/\/sounds\.example;/, "the one other host a page may use, on play");
    } finally {
      await update({ explicit: "false" });
    }
  });

  test("a page image missing from the blob store is a plain 404, not an error nor a cached image", async () => {
    const rec = (await fx.server.services.store.documents.getForConversion(doc.documentId))!;
    const n = READER_FIXTURE_PAGES;
    // The master gone, nothing can be made from it either: its thumbnail and reading variants are missing too.
    await fx.server.services.blobs.delete(blobKeys.page(rec.blobId, n, "read", "jpg"));
    for (const path of [`pages/read/${n}.jpg?v=x`, `pages/thumb/${n}.jpg?v=x`, `pages/w800/${n}?v=x`, `pages/w200/${n}?v=x`]) {
      const res = await get(`/${doc.username}/docs/${doc.name}/${path}`);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get("cache-control"), "no-cache", path);
      assert.equal(res.headers.get("etag"), null, path);
    }
    assert.equal((await get(`/${doc.username}/docs/${doc.name}/pages/thumb/1.jpg`)).status, 200, "the others still serve");
  });

  test("the profile lists public active documents newest first, 24 a page", async () => {
    const owner = await fx.server.services.store.accounts.getKeyOwnerForSigning(fx.server.account.apiKey);
    const seeded = [];
    for (let i = 0; i < 25; i++) {
      seeded.push(await seedDoc(fx.server, { accountId: owner!.accountId, username: "tester" }, {
        name: `seeded-${String(i).padStart(2, "0")}`, title: `Seeded ${i}`, state: "A", pageCount: 1, publishDate: Date.UTC(2001, 0, 1 + i),
      }));
    }
    await seedDoc(fx.server, { accountId: owner!.accountId, username: "tester" }, { name: "seeded-private", state: "A", access: "private", publishDate: Date.UTC(2030, 0, 1) });
    const names = (html: string) => [...html.matchAll(/<a href="\/tester\/docs\/([^"]+)">/g)].map((m) => m[1]);
    const first = await text("/tester");
    const second = await text("/tester?page=2");
    // The converted fixture was published now, after every seeded date: it comes first.
    assert.deepEqual(names(first), [doc.name, ...seeded.slice(2).reverse().map((d) => d.name)]);
    assert.deepEqual(names(second), seeded.slice(0, 2).reverse().map((d) => d.name));
    assert.match(first, /<a rel="next" href="\/tester\?page=2">/);
    assert.match(second, /<a rel="prev" href="\/tester">/);
    assert.deepEqual(names(await text("/tester?page=3")), []);
  });
});
