import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { buffer as readAll } from "node:stream/consumers";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import pino from "pino";
import sharp from "sharp";
import { luma, ssim } from "../../bench/image-quality.ts";
import { renderPages, type PdfLimits } from "../../src/convert/pdf-pages.ts";
import { DEFAULT_SANDBOX } from "../../src/convert/sandbox.ts";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { LocalBlobStore } from "../../src/blobs/local-blob-store.ts";
import { pagesCommand } from "../../src/cli/pages-command.ts";
import { ALL_VARIANT_WIDTHS, classifyPage, imageFormatOf, PAGE_WIDTHS } from "../../src/domain/page-images.ts";
import { PAGE_VARIANTS, PAGE_VARIANTS_REMAKE } from "../../src/domain/job-kinds.ts";
import { pageVariantsHandler } from "../../src/jobs/page-variants.ts";
import { pageVariants, variantOfMaster } from "../../src/page-variants.ts";
import type { Job } from "../../src/store/jobs.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { newStoreDoc } from "../helpers/search-docs.ts";
import { loadConfig } from "../../src/config.ts";
import type { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { jobRegistry } from "../../src/worker-role.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

/**
 * `quire pages reencode` (issue 30): one `page-variants` job per published document, each making
 * every page's WebP variants from the page's stored master, the masters left as they are.
 */

const pgSkip = await postgresUnavailable();

/** A master as a conversion before issue 30 stored it: a 1200 px JPEG q90 of black text on white. */
async function master(page: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${PAGE_WIDTHS.read}" height="1553"><rect width="100%" height="100%" fill="#fff"/>${Array.from({ length: 30 }, (_, i) => `<text x="80" y="${120 + i * 44}" font-size="28" fill="#000">Page ${page}, line ${i + 1}: the quick brown fox jumps over the lazy dog</text>`).join("")}</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 90 }).toBuffer();
}

for (const dialect of DIALECTS) {
  describe(`quire pages reencode on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let blobDir: string;
    let blobs: LocalBlobStore;
    let accountId: number;

    before(async () => {
      ({ store, drop } = await dialect.open());
      blobDir = await mkdtemp(join(tmpdir(), "quire-page-variants-"));
      blobs = new LocalBlobStore(blobDir);
      accountId = await seedAccount(store, "olduser", "o".repeat(32), "s".repeat(32), 1);
    });
    after(async () => {
      await drop();
      await rm(blobDir, { recursive: true, force: true });
    });

    /** A document converted before the variants: its masters and thumbnails only. */
    async function convertedLongAgo(title: string, pages: number) {
      const doc = newStoreDoc(accountId, "olduser", { title, state: "P" });
      await store.documents.insertWithJob(doc, "convert-document");
      await store.documents.markActive(doc.documentId, { pageCount: pages, coverWidth: 600, coverHeight: 776, description: undefined, name: undefined }, Date.now());
      for (let n = 1; n <= pages; n++) {
        const m = await master(n);
        await blobs.put(blobKeys.page(doc.blobId, n, "read", "jpg"), Readable.from([m]));
        await blobs.put(blobKeys.page(doc.blobId, n, "thumb", "jpg"), Readable.from([await sharp(m).resize({ width: 200 }).jpeg().toBuffer()]));
      }
      return doc;
    }
    const output = () => {
      const lines: string[] = [];
      return { lines, write: (s: string) => void lines.push(s) };
    };

    test("queues one job per published document, not twice; each job makes every page's variants and leaves the masters", async () => {
      const a = await convertedLongAgo("Old letter", 3);
      const b = await convertedLongAgo("Old memo", 2);
      const pending = newStoreDoc(accountId, "olduser", { title: "Still converting", state: "P" });
      await store.documents.insertWithJob(pending, "convert-document");
      const before = new Map<string, Buffer>();
      for (const key of await blobs.list(blobKeys.prefix(a.blobId))) before.set(key, await readAll(await blobs.get(key)));

      const out = output();
      assert.equal(await pagesCommand(store, ["reencode"], out.write, out.write), 0);
      assert.match(out.lines.join(""), /^2 documents queued/);
      const queued = async () => (await dbOf(store).selectFrom("jobs").select(["documentId"]).where("kind", "=", PAGE_VARIANTS).where("state", "=", "queued").execute()).map((j) => j.documentId).sort();
      assert.deepEqual(await queued(), [a.documentId, b.documentId].sort(), "published documents only");
      assert.equal(await pagesCommand(store, ["reencode"], out.write, out.write), 0);
      assert.deepEqual(await queued(), [a.documentId, b.documentId].sort(), "a document with a job queued is not queued again");

      const handler = pageVariantsHandler({ store, variants: pageVariants(blobs) });
      const run = (documentId: string) => handler.run({ job: { documentId, kind: PAGE_VARIANTS } as Job, signal: new AbortController().signal });
      assert.equal(await run(a.documentId), "success");
      for (let n = 1; n <= 3; n++) {
        for (const w of ALL_VARIANT_WIDTHS) {
          const body = await readAll(await blobs.get(blobKeys.pageVariant(a.blobId, n, w, "webp")));
          const meta = await sharp(body).metadata();
          assert.deepEqual([meta.format, meta.width], ["webp", w], `page ${n} at ${w}`);
        }
      }
      for (const [key, body] of before) assert.deepEqual(await readAll(await blobs.get(key)), body, `${key} unchanged`);
      // Run again (a lost lease, the command twice): nothing left to make, nothing made again.
      const stamp = (await blobs.listWithTimes!(blobKeys.prefix(a.blobId))).filter((e) => e.key.includes("/w")).map((e) => `${e.key}@${e.modifiedAt}`).sort();
      assert.equal(await run(a.documentId), "success");
      assert.deepEqual((await blobs.listWithTimes!(blobKeys.prefix(a.blobId))).filter((e) => e.key.includes("/w")).map((e) => `${e.key}@${e.modifiedAt}`).sort(), stamp);
    });

    /**
     * The queue's page-variants jobs, claimed from the store and run by the handlers `quire worker`
     * registers for their kinds (the rest of its registry is never called here).
     */
    async function runQueuedPageJobs(): Promise<string[]> {
      const registry = jobRegistry({
        config: loadConfig({}),
        services: { store, blobs, checkBlobs: async () => {} },
        log: pino({ level: "silent" }),
        sandbox: DEFAULT_SANDBOX,
        office: undefined as unknown as OfficeConverter,
      });
      const ran: string[] = [];
      for (let job; (job = await store.jobs.claimNext("test", Date.now(), 60_000, { kinds: [PAGE_VARIANTS, PAGE_VARIANTS_REMAKE] })); ) {
        const outcome = await registry[job.kind].run({ job, signal: new AbortController().signal });
        assert.ok(await store.jobs.finish(job.id, "test", Date.now(), { state: outcome === "failed" ? "failed" : "done" }));
        ran.push(`${job.kind} ${job.documentId} ${outcome}`);
      }
      return ran;
    }
    /** The first four bytes of a WebP's image chunk: "VP8L" lossless (the flat encoding), "VP8 " lossy. */
    const webpChunk = (body: Buffer) => body.subarray(12, 16).toString("latin1");

    test("--force makes a text page's stored lossy variants again, flat, in their place; without it they are left alone", async () => {
      const doc = await convertedLongAgo("Letter encoded before the flat encoding", 2);
      const variantKey = (n: number, w: number, ext = "webp") => blobKeys.pageVariant(doc.blobId, n, w, ext);
      // Variants as an earlier encoder stored them: lossy WebP at every width, and a JPEG fallback.
      const old = new Map<string, Buffer>();
      for (let n = 1; n <= 2; n++) {
        const m = await readAll(await blobs.get(blobKeys.page(doc.blobId, n, "read", "jpg")));
        for (const w of ALL_VARIANT_WIDTHS) old.set(variantKey(n, w), await sharp(m).resize({ width: w }).webp({ quality: 70 }).toBuffer());
        old.set(variantKey(n, 800, "jpg"), await sharp(m).resize({ width: 800 }).jpeg({ quality: 90 }).toBuffer());
      }
      for (const [key, body] of old) await blobs.put(key, Readable.from([body]));
      const untouched = new Map<string, Buffer>();
      for (const key of await blobs.list(blobKeys.prefix(doc.blobId))) if (!key.endsWith(".webp")) untouched.set(key, await readAll(await blobs.get(key)));
      const stored = async (key: string) => readAll(await blobs.get(key));

      const out = output();
      assert.equal(await pagesCommand(store, ["reencode", "--document", doc.documentId], out.write, out.write), 0);
      assert.ok((await runQueuedPageJobs()).includes(`${PAGE_VARIANTS} ${doc.documentId} success`));
      for (const [key, body] of old) assert.deepEqual(await stored(key), body, `${key}: without --force a stored variant stays`);

      assert.equal(await pagesCommand(store, ["reencode", "--force", "--document", doc.documentId], out.write, out.write), 0);
      assert.match(out.lines.at(-1)!, /^1 document queued for page re-encoding \(--force/);
      assert.deepEqual(await runQueuedPageJobs(), [`${PAGE_VARIANTS_REMAKE} ${doc.documentId} success`]);
      for (let n = 1; n <= 2; n++) {
        const m = await stored(blobKeys.page(doc.blobId, n, "read", "jpg"));
        for (const w of ALL_VARIANT_WIDTHS) {
          const body = await stored(variantKey(n, w));
          assert.notDeepEqual(body, old.get(variantKey(n, w)), `page ${n} at ${w} made again`);
          assert.deepEqual([(await sharp(body).metadata()).width], [w]);
        }
        // At the reading size the variant is exactly what a first request makes today: the flat encoding.
        const today = await variantOfMaster(m, PAGE_WIDTHS.read, "webp");
        assert.equal(today.encoding, "flat");
        const read = await stored(variantKey(n, PAGE_WIDTHS.read));
        assert.deepEqual(read, today.body, `page ${n}: today's encoding`);
        assert.deepEqual([webpChunk(old.get(variantKey(n, PAGE_WIDTHS.read))!), webpChunk(read)], ["VP8 ", "VP8L"]);
        assert.ok(read.length < old.get(variantKey(n, PAGE_WIDTHS.read))!.length, `page ${n}: ${read.length} bytes against the lossy ${old.get(variantKey(n, PAGE_WIDTHS.read))!.length}`);
      }
      for (const [key, body] of untouched) assert.deepEqual(await stored(key), body, `${key}: masters and the JPEG fallback unchanged`);
    });

    test("a deleted document, an unknown one and wrong arguments: skipped, refused, nothing queued", async () => {
      const gone = await convertedLongAgo("Gone", 1);
      await store.documents.deleteByNames(accountId, [gone.documentId]);
      const handler = pageVariantsHandler({ store, variants: pageVariants(blobs) });
      assert.equal(await handler.run({ job: { documentId: gone.documentId, kind: PAGE_VARIANTS } as Job, signal: new AbortController().signal }), "skipped");
      const out = output();
      const jobsBefore = (await dbOf(store).selectFrom("jobs").select("id").execute()).length;
      assert.equal(await pagesCommand(store, ["reencode", "--document", "no-such-document"], out.write, out.write), 1);
      assert.match(out.lines.join(""), /no published document "no-such-document"/);
      for (const args of [["reencode", "--document"], ["reencode", "--document", "--force"], ["reencode", "--everything"], ["reencode", "extra"], ["shrink"]]) {
        assert.equal(await pagesCommand(store, args, out.write, out.write), 2, args.join(" "));
      }
      assert.equal((await dbOf(store).selectFrom("jobs").select("id").execute()).length, jobsBefore, "nothing queued");
    });

    test("a master missing (the document replaced or deleted meanwhile) ends the job skipped, not failed", async () => {
      const doc = await convertedLongAgo("Half gone", 2);
      await blobs.delete(blobKeys.page(doc.blobId, 2, "read", "jpg"));
      const handler = pageVariantsHandler({ store, variants: pageVariants(blobs) });
      assert.equal(await handler.run({ job: { documentId: doc.documentId, kind: PAGE_VARIANTS } as Job, signal: new AbortController().signal }), "skipped");
    });
  });
}

describe("classifyPage", () => {
  test("black text on white is text, a grey photograph grey, any clear colour colour", () => {
    const n = 10_000;
    const text = new Uint8Array(n * 3).fill(255);
    for (let i = 0; i < n * 3; i += 30) text[i] = text[i + 1] = text[i + 2] = 0;
    assert.equal(classifyPage(text, 3), "text");
    const grey = new Uint8Array(n).map((_, i) => 60 + (i % 120));
    assert.equal(classifyPage(grey, 1), "grey");
    const colour = Uint8Array.from(text);
    for (let i = 0; i < 300; i += 3) [colour[i], colour[i + 1], colour[i + 2]] = [200, 30, 30];
    assert.equal(classifyPage(colour, 3), "colour");
    assert.equal(classifyPage(new Uint8Array(0), 3), "text");
  });
});

/**
 * Issue 30, item 1: a text page's WebP is chosen by measuring the page, and is a third of the old page's
 * bytes or less at an SSIM at least the old page's. Real fixture pages, their masters made by the
 * conversion's own renderPages, their SSIM against poppler's lossless pixels (bench/image-quality.ts,
 * as `npm run bench -- pages` measures). Sizes and qualities only; libwebp is deterministic.
 */
describe("variant encoding by what the page is", () => {
  const limits: PdfLimits = { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 60_000, sandbox: DEFAULT_SANDBOX };
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "quire-variant-encoding-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Page `page` of `pdf`: its master as the conversion stores it, and poppler's lossless pixels at `width`. */
  async function fixturePage(pdf: string, page: number, name: string) {
    const [read] = await renderPages(join(FIXTURES, pdf), join(dir, name), { widths: { read: PAGE_WIDTHS.read }, limits, firstPage: page, lastPage: page });
    const master = await readFile(read!.path);
    const png = join(dir, `${name}-ref`);
    await promisify(execFile)("pdftoppm", ["-png", "-cropbox", "-scale-to-x", String(PAGE_WIDTHS.read), "-scale-to-y", "-1", "-f", String(page), "-l", String(page), "-singlefile", join(FIXTURES, pdf), png]);
    return { master, ref: await readFile(`${png}.png`) };
  }
  async function lumaAt(image: Buffer, width: number) {
    const { data, info } = await sharp(image).resize({ width }).removeAlpha().toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
    return { y: luma({ data, width: info.width, height: info.height }), width: info.width, height: info.height };
  }
  async function ssimAgainst(ref: Buffer, image: Buffer, width: number): Promise<number> {
    const a = await lumaAt(ref, width);
    const b = await lumaAt(image, width);
    assert.deepEqual([b.width, b.height], [a.width, a.height]);
    return ssim(a.y, b.y, a.width, a.height);
  }

  test("a page of body text is flat lossless WebP: at most 0.37 of its JPEG's bytes at 1200 px, 0.22 at 800, at a higher SSIM", async () => {
    const { master, ref } = await fixturePage("bad/pdf-352-pages-freeculture.pdf", 20, "text");
    const masterSsim = await ssimAgainst(ref, master, PAGE_WIDTHS.read);
    const read = await variantOfMaster(master, PAGE_WIDTHS.read, "webp");
    assert.equal(read.pageClass, "text");
    assert.equal(read.encoding, "flat");
    assert.equal((await sharp(read.body).metadata()).format, "webp");
    assert.ok(read.body.length <= 0.37 * master.length, `${read.body.length} of ${master.length} bytes`);
    const readSsim = await ssimAgainst(ref, read.body, PAGE_WIDTHS.read);
    assert.ok(readSsim >= masterSsim, `SSIM ${readSsim} against the old page's ${masterSsim}`);
    // At 800 px the old encoding is JPEG q90 of the page at that width.
    const small = await variantOfMaster(master, 800, "webp");
    assert.equal(small.encoding, "flat");
    assert.ok(small.body.length <= 0.22 * master.length, `${small.body.length} of ${master.length} bytes`);
    const jpeg800 = await sharp(ref).resize({ width: 800 }).jpeg({ quality: 90 }).toBuffer();
    assert.ok((await ssimAgainst(ref, small.body, 800)) >= (await ssimAgainst(ref, jpeg800, 800)));
    // A browser without WebP still gets a JPEG.
    const fallback = await variantOfMaster(master, 800, "jpeg");
    assert.equal((await sharp(fallback.body).metadata()).format, "jpeg");
  });

  /** JPEG q90 of the page's lossless pixels at `width`: what the old encoding reaches there (the target). */
  async function oldSsimAt(ref: Buffer, width: number): Promise<number> {
    return ssimAgainst(ref, await sharp(ref).resize({ width }).jpeg({ quality: 90 }).toBuffer(), width);
  }

  test("a scanned page is its master's own bytes at the master's width (a second lossy generation fell short there) and lossy WebP below, each at the old SSIM", async () => {
    const { master, ref } = await fixturePage("ocr-scanned-2pages-faa-advisory.pdf", 1, "scan");
    const read = await variantOfMaster(master, PAGE_WIDTHS.read, "webp");
    assert.equal(read.encoding, "master");
    assert.ok(read.body.equals(master), "the master's bytes");
    assert.equal(imageFormatOf(read.body), "jpeg");
    const small = await variantOfMaster(master, 800, "webp");
    assert.equal(small.encoding, "lossy");
    assert.equal(imageFormatOf(small.body), "webp");
    assert.ok(small.body.length <= 0.4 * master.length, `${small.body.length} of ${master.length} bytes`);
    assert.ok((await ssimAgainst(ref, small.body, 800)) >= (await oldSsimAt(ref, 800)));
  });

  test("the book's cover (colour over much of it) is not flat: the master's exact pixels as lossless WebP at its width, lossy WebP below, each at the old SSIM", async () => {
    const { master, ref } = await fixturePage("bad/pdf-352-pages-freeculture.pdf", 1, "cover");
    const read = await variantOfMaster(master, PAGE_WIDTHS.read, "webp");
    assert.deepEqual([read.pageClass, read.encoding], ["colour", "lossless"]);
    assert.ok(read.body.length < 0.7 * master.length, `${read.body.length} of ${master.length} bytes`);
    const pixels = async (b: Buffer) => (await sharp(b).removeAlpha().toColourspace("srgb").raw().toBuffer()).toString("base64");
    assert.equal(await pixels(read.body), await pixels(master), "the master's pixels, exactly");
    for (const width of [800, 600, 400]) {
      const v = await variantOfMaster(master, width, "webp");
      assert.equal(v.encoding, "lossy", `${width} px`);
      assert.ok((await ssimAgainst(ref, v.body, width)) >= (await oldSsimAt(ref, width)), `${width} px`);
    }
  });

  test("the glyph table stays flat at 600 px, in finer steps there, and reaches the old SSIM", async () => {
    const { master, ref } = await fixturePage("pdf-tcpdf-14pages.pdf", 1, "glyphs");
    const v = await variantOfMaster(master, 600, "webp");
    assert.equal(v.encoding, "flat");
    assert.ok((await ssimAgainst(ref, v.body, 600)) >= (await oldSsimAt(ref, 600)));
  });

  test("a photograph stays JPEG (no WebP quality reaches JPEG q90's SSIM on one): the master at its width, q95 below it, at the old SSIM", async () => {
    const ref = await sharp(join(FIXTURES, "img-photo-exif-tika.jpg")).resize({ width: PAGE_WIDTHS.read }).png().toBuffer();
    const photo = await sharp(ref).jpeg({ quality: 90 }).toBuffer();
    const read = await variantOfMaster(photo, PAGE_WIDTHS.read, "webp");
    assert.deepEqual([read.pageClass, read.encoding], ["colour", "master"]);
    assert.ok(read.body.equals(photo));
    for (const width of [800, 600, 400]) {
      const v = await variantOfMaster(photo, width, "webp");
      assert.equal(v.encoding, "jpeg", `${width} px`);
      assert.equal(imageFormatOf(v.body), "jpeg");
      assert.ok((await ssimAgainst(ref, v.body, width)) >= (await oldSsimAt(ref, width)), `${width} px`);
    }
  });
});
