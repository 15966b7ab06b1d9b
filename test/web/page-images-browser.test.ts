import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { PAGE_WIDTHS, VARIANT_WIDTHS } from "../../src/domain/page-images.ts";
import { launchChromium } from "../helpers/browser.ts";
import { READER_FIXTURE, READER_FIXTURE_PAGES, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

/**
 * The reader's page images in Debian's Chromium (issue 30): the width each screen asks for, the
 * 2x image when zoomed, JPEG for a browser that does not take WebP, no layout shift, and a document
 * converted before the variants existed (masters and thumbnails only) still read.
 */
describe("page images in a real browser", { timeout: 240_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let doc: DocumentRecord;
  let old: DocumentRecord;
  let photo: DocumentRecord;
  const readerUrl = (d: DocumentRecord) => `${fx.server.url}/${d.username}/docs/${d.name}`;

  before(async () => {
    fx = await startWebFixture();
    [doc, old, photo, browser] = await Promise.all([
      fx.publish(READER_FIXTURE, { title: "Sample fonts" }),
      fx.publish(READER_FIXTURE, { title: "Converted long ago" }),
      fx.publish("img-photo-exif-tika.jpg", { title: "A photograph" }),
      launchChromium(),
    ]);
    await fx.stopWorker();
    // A document converted before issue 30: its masters and stored JPEG thumbnails, no variant at all.
    const rec = (await fx.server.services.store.documents.getForConversion(old.documentId))!;
    const { blobs } = fx.server.services;
    for (const key of await blobs.list(blobKeys.prefix(rec.blobId))) if (/\/pages\/w\d+\//.test(key)) await blobs.delete(key);
    for (let n = 1; n <= rec.pageCount; n++) {
      const master = await sharp(await streamToBuffer(await blobs.get(blobKeys.page(rec.blobId, n, "read", "jpg")))).resize({ width: PAGE_WIDTHS.thumb }).jpeg({ quality: 90 }).toBuffer();
      await blobs.put(blobKeys.page(rec.blobId, n, "thumb", "jpg"), Readable.from([master]));
    }
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  /** Every page image the page asks for, by address, with the answer's type. */
  async function opened(context: BrowserContext, url: string): Promise<{ page: Page; images: Array<{ url: string; type: string }> }> {
    const page = await context.newPage();
    const images: Array<{ url: string; type: string }> = [];
    page.on("response", (r) => {
      if (/\/pages\//.test(r.url())) images.push({ url: new URL(r.url()).pathname, type: r.headers()["content-type"] ?? "" });
    });
    await page.goto(url);
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.page[data-page="1"] img');
      return document.querySelector<HTMLElement>("#reader")?.dataset.ready === "true" && !!img && img.complete && img.naturalWidth > 0;
    });
    return { page, images };
  }

  /**
   * The variant width srcset should give an image shown `cssWidth` px wide on a screen of `dpr`: the
   * smallest covering the page at the screen's density, where from 2.5x the slot counts as 0.667 of
   * its width (reader-page.ts DENSITY_CAP): a 3x screen is served as 2x.
   */
  const expectedWidth = (cssWidth: number, dpr: number) => VARIANT_WIDTHS.find((w) => w >= cssWidth * (dpr >= 2.5 ? 0.667 * dpr : dpr)) ?? VARIANT_WIDTHS.at(-1)!;
  const firstPageState = (page: Page) =>
    page.evaluate(() => {
      const img = document.querySelector<HTMLImageElement>('.page[data-page="1"] img')!;
      return { css: img.getBoundingClientRect().width, dpr: devicePixelRatio, current: img.currentSrc, natural: img.naturalWidth };
    });
  const widthOf = (path: string) => Number(/\/pages\/w(\d+)\//.exec(path)?.[1]);

  test("a wide screen and phones at 2x, 2.625x and 3x each ask for page 1 once, at the width their layout and density need (3x served as 2x), in WebP", async () => {
    const seen: Record<string, number> = {};
    for (const [label, opts] of [
      ["wide", { viewport: { width: 1366, height: 850 }, deviceScaleFactor: 1 }],
      ["phone", { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }],
      ["phone3x", { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true }],
      // Between 2.5x and 3x the script must scale as the HTML does: here the HTML's slot takes the
      // 600 px image, and a script scaling by 2 ÷ density asked for the 800 px one as well.
      ["phone2.6x", { viewport: { width: 360, height: 800 }, deviceScaleFactor: 2.625, isMobile: true, hasTouch: true }],
    ] as const) {
      const context = await browser.newContext(opts);
      try {
        const { page, images } = await opened(context, readerUrl(doc));
        await page.screenshot({ path: `/tmp/shots-pages-${label}.png` }).catch(() => undefined);
        const state = await firstPageState(page);
        const page1 = images.filter((i) => /\/pages\/[^/]+\/1(\.jpg)?$/.test(i.url) && !i.url.includes("/w200/"));
        assert.equal(page1.length, 1, `${label}: page 1 fetched once: ${JSON.stringify(page1)}`);
        const width = widthOf(page1[0]!.url);
        assert.equal(width, expectedWidth(state.css, state.dpr), `${label}: ${JSON.stringify(state)}`);
        assert.equal(page1[0]!.type, "image/webp");
        assert.ok(!images.some((i) => i.url.includes("/pages/read/") || i.url.includes("/pages/thumb/")), "no master at its old address");
        assert.ok(images.filter((i) => i.url.includes("/w200/")).every((i) => i.type === "image/webp"), "thumbnails are WebP variants");
        seen[label] = width;
      } finally {
        await context.close();
      }
    }
    assert.ok(seen.phone! < PAGE_WIDTHS.read && seen.phone3x! < PAGE_WIDTHS.read && seen.wide! < PAGE_WIDTHS.read, `none takes the 1200 px master at first: ${JSON.stringify(seen)}`);
  });

  test("zoomed to about 200%, the page asks for its 2x image", async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 850 }, deviceScaleFactor: 1 });
    try {
      const { page, images } = await opened(context, readerUrl(doc));
      const before = await firstPageState(page);
      // Three steps of 1.25: x1.95.
      for (let i = 0; i < 3; i++) await page.click('[data-action="zoom-in"]');
      const want = expectedWidth(before.css * 1.95, 1);
      assert.ok(want > widthOf(images[0]?.url ?? "") || want === VARIANT_WIDTHS.at(-1), "the zoomed page needs a larger image");
      await page.waitForFunction((w) => document.querySelector<HTMLImageElement>('.page[data-page="1"] img')!.currentSrc.includes(`/w${w}/`), want);
      assert.ok(images.some((i) => i.url.endsWith(`/w${want}/1`)), JSON.stringify(images));
      await page.waitForFunction(() => document.querySelector<HTMLImageElement>('.page[data-page="1"] img')!.naturalWidth > 0);
    } finally {
      await context.close();
    }
  });

  test("a browser that does not take WebP gets JPEG at the same addresses, and the page shows", async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 850 } });
    try {
      // As an old browser sends it: no image/webp in Accept.
      await context.route("**/pages/**", (route) => route.continue({ headers: { ...route.request().headers(), accept: "image/png,image/jpeg,image/*;q=0.8" } }));
      const { page, images } = await opened(context, readerUrl(doc));
      assert.ok(images.length > 0 && images.every((i) => i.type === "image/jpeg"), JSON.stringify(images));
      assert.ok((await firstPageState(page)).natural > 0);
    } finally {
      await context.close();
    }
    // The answer says it depends on Accept, so no cache gives one browser's format to another.
    const path = `${readerUrl(doc)}/pages/w600/2?v=x`;
    for (const [accept, type] of [["image/avif,image/webp,*/*", "image/webp"], ["image/jpeg", "image/jpeg"], ["image/webp;q=0, image/*", "image/jpeg"], ["", "image/jpeg"]] as const) {
      const res = await fetch(path, { headers: { accept } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), type, accept);
      assert.equal(res.headers.get("vary"), "Accept");
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      assert.equal(meta.width, 600);
    }
  });

  test("a photograph is answered as JPEG even to a browser that takes WebP (no WebP reaches its quality), at every width, and shows", async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 850 } });
    try {
      const { page, images } = await opened(context, readerUrl(photo));
      await page.screenshot({ path: "/tmp/shots-pages-photo-wide.png" }).catch(() => undefined);
      const page1 = images.filter((i) => /\/pages\/w\d+\/1$/.test(i.url) && !i.url.includes("/w200/"));
      assert.ok(page1.length >= 1 && page1.every((i) => i.type === "image/jpeg"), JSON.stringify(images));
      assert.ok((await firstPageState(page)).natural > 0, "page 1 shows");
    } finally {
      await context.close();
    }
    for (const width of VARIANT_WIDTHS) {
      const res = await fetch(`${readerUrl(photo)}/pages/w${width}/1?v=x`, { headers: { accept: "image/avif,image/webp,*/*" } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "image/jpeg", `${width} px`);
      assert.equal(res.headers.get("vary"), "Accept");
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      assert.deepEqual([meta.format, meta.width], ["jpeg", width]);
    }
  });

  test("page 1 is preloaded at high priority, its box is sized before it loads: no page moves as images arrive", async () => {
    const html = await (await fetch(readerUrl(doc))).text();
    const preload = /<link rel="preload" as="image" imagesrcset="([^"]+)" imagesizes="([^"]+)" fetchpriority="high">/.exec(html);
    assert.ok(preload, "a preload link for the start page");
    const img = /<img src="[^"]+" srcset="([^"]+)" sizes="([^"]+)" width="\d+" height="\d+" alt="Page 1" fetchpriority="high"/.exec(html);
    assert.ok(img, "page 1's image, sized, at high priority");
    assert.equal(img[1], preload[1]);
    assert.equal(img[2], preload[2]);
    assert.equal((html.match(/alt="" loading="lazy"/g) ?? []).length, READER_FIXTURE_PAGES, "every thumbnail lazy");
    const context = await browser.newContext({ viewport: { width: 1366, height: 850 } });
    try {
      const page = await context.newPage();
      await page.addInitScript(() => {
        const w = window as unknown as { __shifted: string[] };
        w.__shifted = [];
        new PerformanceObserver((list) => {
          for (const e of list.getEntries() as Array<PerformanceEntry & { hadRecentInput: boolean; sources: Array<{ node?: Node }> }>) {
            if (!e.hadRecentInput) for (const src of e.sources) w.__shifted.push(src.node instanceof Element ? `${src.node.nodeName}.${src.node.className}` : String(src.node?.nodeName));
          }
        }).observe({ type: "layout-shift", buffered: true });
      });
      await page.goto(readerUrl(doc), { waitUntil: "load" });
      await page.waitForLoadState("networkidle");
      // No page image, page box or thumbnail moves as images arrive. (The header's description,
      // folded by the reader's script once it runs, is the reader's layout: docs/images.md.)
      const shifted = await page.evaluate(() => (window as unknown as { __shifted: string[] }).__shifted);
      assert.deepEqual(shifted.filter((s) => /^(IMG|FIGURE)|page|thumbs|stage/.test(s)), [], JSON.stringify(shifted));
    } finally {
      await context.close();
    }
  });

  test("a document converted before the variants still reads: old addresses answer its own files, the reader its variants", async () => {
    const rec = (await fx.server.services.store.documents.getForConversion(old.documentId))!;
    const storedThumb = await streamToBuffer(await fx.server.services.blobs.get(blobKeys.page(rec.blobId, 3, "thumb", "jpg")));
    const thumb = await fetch(`${readerUrl(old)}/pages/thumb/3.jpg`);
    assert.equal(thumb.status, 200);
    assert.deepEqual(Buffer.from(await thumb.arrayBuffer()), storedThumb, "the stored thumbnail, as it always was");
    const read = await fetch(`${readerUrl(old)}/pages/read/3.jpg`);
    assert.equal(read.headers.get("content-type"), "image/jpeg");
    assert.equal((await sharp(Buffer.from(await read.arrayBuffer())).metadata()).width, PAGE_WIDTHS.read);
    const context = await browser.newContext({ viewport: { width: 1366, height: 850 } });
    try {
      const { images } = await opened(context, readerUrl(old));
      assert.ok(images.some((i) => /\/w\d+\/1$/.test(i.url) && i.type === "image/webp"), JSON.stringify(images));
    } finally {
      await context.close();
    }
    // What the reader asked for is stored now, beside the old files, which are unchanged.
    const keys = await fx.server.services.blobs.list(blobKeys.prefix(rec.blobId));
    assert.ok(keys.some((k) => /\/pages\/w\d+\/1\.webp$/.test(k)));
    assert.equal(keys.filter((k) => k.includes("/pages/thumb/")).length, READER_FIXTURE_PAGES);
  });

  test("hostile variant addresses are plain 404s: unknown widths, pages beyond the document, odd names", async () => {
    for (const path of ["w300/1", "w0/1", "w800/0", `w800/${READER_FIXTURE_PAGES + 1}`, "w800/1.webp", "w800/01", "w800/1x", "w99999999/1", "W800/1", "w800/-1"]) {
      const res = await fetch(`${readerUrl(doc)}/pages/${path}`);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get("etag"), null, path);
    }
    const keys = await fx.server.services.blobs.list(blobKeys.prefix((await fx.server.services.store.documents.getForConversion(doc.documentId))!.blobId));
    assert.ok(!keys.some((k) => /\/w(300|0|99999999)\//.test(k)), "nothing stored for them");
  });
});

async function streamToBuffer(s: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}
