import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { ConversionError, type ConversionErrorKind } from "../../src/convert/conversion-error.ts";
import { runPoppler } from "../../src/convert/pdf-inspect.ts";
import { configureStallWindow } from "../../src/convert/cpu-watch.ts";
import { machineFaultOf } from "../../src/domain/job-failure.ts";
import { PAGE_WIDTHS } from "../../src/domain/page-images.ts";
import {
  extractText,
  inspectPdf,
  renderCovers,
  renderPages,
  summarize,
  xmlSafe,
  type PageText,
  type PdfLimits,
  type RenderedPage,
} from "../../src/convert/pdf-pages.ts";
import { DEFAULT_SANDBOX } from "../../src/convert/sandbox.ts";

const FIXTURES = fileURLToPath(new URL("../../../shared/fixtures/", import.meta.url));
const BAD = join(FIXTURES, "bad");
const TCPDF = join(FIXTURES, "pdf-tcpdf-14pages.pdf");
const BOOK = join(BAD, "pdf-352-pages-freeculture.pdf");
const LIMITS: PdfLimits = { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 60_000, sandbox: DEFAULT_SANDBOX };
const WIDTHS = PAGE_WIDTHS;

let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "quire-pdf-"));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});
let dirs = 0;
const outDir = () => join(tmp, `out-${++dirs}`);

async function rejectsWith(p: Promise<unknown>, kind: ConversionErrorKind): Promise<ConversionError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ConversionError, `expected a ConversionError, got ${String(e)}`);
    assert.equal(e.kind, kind, e.message);
    assert.ok(e.message.length > 0);
    return e;
  }
  assert.fail(`expected a "${kind}" failure`);
}

interface FakePage {
  mediaBox: number[];
  cropBox?: number[];
  rotate?: number;
  text?: { x: number; y: number; size: number; s: string };
}

/** A minimal valid PDF (Helvetica text, exact xref offsets), for shapes no fixture has. */
function makePdf(pages: FakePage[]): Buffer {
  const objs: string[] = [];
  objs[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objs[2] = `<< /Type /Pages /Count ${pages.length} /Kids [${pages.map((_, i) => `${4 + 2 * i} 0 R`).join(" ")}] >>`;
  objs[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
  pages.forEach((p, i) => {
    const content = p.text ? `BT /F1 ${p.text.size} Tf ${p.text.x} ${p.text.y} Td (${p.text.s}) Tj ET` : "";
    const crop = p.cropBox ? ` /CropBox [${p.cropBox.join(" ")}]` : "";
    const rotate = p.rotate ? ` /Rotate ${p.rotate}` : "";
    objs[4 + 2 * i] = `<< /Type /Page /Parent 2 0 R /MediaBox [${p.mediaBox.join(" ")}]${crop}${rotate} /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
    objs[5 + 2 * i] = `<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`;
  });
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let i = 1; i < objs.length; i++) {
    offsets[i] = Buffer.byteLength(out, "latin1");
    out += `${i} 0 obj\n${objs[i]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objs.length}\n0000000000 65535 f \n`;
  for (let i = 1; i < objs.length; i++) out += `${String(offsets[i]).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

async function writePdf(name: string, pages: FakePage[]): Promise<string> {
  const path = join(tmp, name);
  await writeFile(path, makePdf(pages));
  return path;
}

async function scratchLeft(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith(".render-"));
}

describe("inspectPdf", () => {
  // file, pages (MANIFEST), then the width and height in points of every page, or of all pages when one is given
  const expected: [string, number, [number, number][]][] = [
    ["pdf-quartz-firefox-1page.pdf", 1, [[595, 842]]],
    ["pdf-tcpdf-14pages.pdf", 14, [[595.276, 841.89]]],
    ["pdf-acrobat9-fonts-not-embedded.pdf", 1, [[612, 792]]],
    ["pdf-rotated-page.pdf", 1, [[842, 595]]], // /Rotate 90 on an A4 portrait page: reported as displayed
    ["pdf-owner-password-only-nocopy.pdf", 1, [[612, 792]]], // empty user password: opens
    ["ocr-scanned-2pages-faa-advisory.pdf", 2, [[612, 792]]],
    ["ocr-scanned-french-ocrmypdf.pdf", 1, [[216, 216]]],
    // Pages of every size, one of them 2160 pt square (a 9000×9000 px image page).
    ["ocr-mixed-6pages-text-and-scans-ocrmypdf.pdf", 6, [[384, 470.88], [2160, 2160], [718.5, 300], [718.5, 300], [612, 792], [792, 612]]],
    ["bad/pdf-invalid-xref-entry-renders.pdf", 2, [[576, 792]]],
    ["bad/pdf-junk-header-missing-startxref.pdf", 1, [[400, 50]]],
  ];
  for (const [file, count, sizes] of expected) {
    test(`${file}: ${count} page(s), ${sizes.map(([w, h]) => `${w}×${h}`).join(", ")} pt`, async () => {
      const info = await inspectPdf(join(FIXTURES, file), LIMITS);
      assert.equal(info.pageCount, count);
      assert.equal(info.pages.length, count);
      info.pages.forEach((p, i) => {
        const [w, h] = sizes.length === 1 ? sizes[0]! : sizes[i]!;
        assert.ok(Math.abs(p.width - w) < 0.01 && Math.abs(p.height - h) < 0.01, `page ${i + 1}: ${JSON.stringify(p)}`);
      });
    });
  }

  test("every top-level PDF fixture is covered above", async () => {
    const top = (await readdir(FIXTURES)).filter((n) => n.endsWith(".pdf")).sort();
    assert.deepEqual(top, expected.map(([f]) => f).filter((f) => !f.startsWith("bad/")).sort());
  });

  test("the 352-page book: every page sized from its CropBox", { timeout: 30_000 }, async () => {
    const info = await inspectPdf(BOOK, LIMITS);
    assert.equal(info.pageCount, 352);
    assert.equal(info.pages.length, 352);
    assert.deepEqual(info.pages[0], { width: 489.6, height: 734.4 }); // MediaBox is 612×792
  });

  test("CropBox and /Rotate 90 and 270 of a generated PDF", async () => {
    const box = { mediaBox: [0, 0, 600, 800], cropBox: [100, 100, 500, 700] };
    const path = await writePdf("rotations.pdf", [box, { ...box, rotate: 90 }, { ...box, rotate: 270 }, { ...box, rotate: 180 }]);
    const info = await inspectPdf(path, LIMITS);
    assert.deepEqual(info.pages, [
      { width: 400, height: 600 },
      { width: 600, height: 400 },
      { width: 600, height: 400 },
      { width: 400, height: 600 },
    ]);
    assert.deepEqual(info.quarterTurned, [false, true, true, false]);
  });
});

describe("failures", () => {
  test("a user password → encrypted (4), from every entry point", async () => {
    const pdf = join(BAD, "pdf-encrypted-user-password.pdf");
    const e = await rejectsWith(inspectPdf(pdf, LIMITS), "encrypted");
    assert.equal(e.code, 4);
    await rejectsWith(renderPages(pdf, outDir(), { widths: WIDTHS, limits: LIMITS }), "encrypted");
    await rejectsWith(renderCovers(pdf, outDir(), LIMITS), "encrypted");
    await rejectsWith(extractText(pdf, LIMITS), "encrypted");
  });

  for (const file of ["pdf-corrupt-no-trailer.pdf", "pdf-truncated-half.pdf", "empty.pdf"]) {
    test(`bad/${file} → corrupt (3)`, async () => {
      const e = await rejectsWith(inspectPdf(join(BAD, file), LIMITS), "corrupt");
      assert.equal(e.code, 3);
      await rejectsWith(renderPages(join(BAD, file), outDir(), { widths: WIDTHS, limits: LIMITS }), "corrupt");
      await rejectsWith(extractText(join(BAD, file), LIMITS), "corrupt");
    });
  }

  test("a freshly made empty file and a non-PDF → corrupt", async () => {
    const empty = join(tmp, "empty.pdf");
    await writeFile(empty, "");
    await rejectsWith(inspectPdf(empty, LIMITS), "corrupt");
    await rejectsWith(inspectPdf(join(BAD, "scan-page.png"), LIMITS), "corrupt");
  });

  test("more pages than maxPages → limits (5), before anything is rendered", async () => {
    const limits = { ...LIMITS, maxPages: 100 };
    const e = await rejectsWith(inspectPdf(BOOK, limits), "limits");
    assert.equal(e.code, 5);
    assert.match(e.message, /352/);
    const dir = outDir();
    await rejectsWith(renderPages(BOOK, dir, { widths: WIDTHS, limits }), "limits");
    await assert.rejects(readdir(dir), { code: "ENOENT" });
    await rejectsWith(extractText(BOOK, limits), "limits");
    await rejectsWith(renderCovers(BOOK, outDir(), limits), "limits");
  });

  test("a page too many pixels at the reading width → limits, nothing rendered", async () => {
    // 72×14400 pt at 1200 px wide is 1200×240000 px (288 million).
    const path = await writePdf("strip.pdf", [{ mediaBox: [0, 0, 612, 792] }, { mediaBox: [0, 0, 72, 14400] }]);
    const dir = outDir();
    const e = await rejectsWith(renderPages(path, dir, { widths: WIDTHS, limits: LIMITS }), "limits");
    assert.match(e.message, /Page 2/);
    await assert.rejects(readdir(dir), { code: "ENOENT" });
    // Covers only draw page 1; at 600 px wide a strip first page is 600×120000 px, still too many.
    await renderCovers(path, outDir(), LIMITS);
    const stripFirst = await writePdf("strip-first.pdf", [{ mediaBox: [0, 0, 72, 14400] }]);
    await rejectsWith(renderCovers(stripFirst, outDir(), LIMITS), "limits");
  });

  test("a 14400×14400 pt page is fine: pages are scaled to the reading width, not rendered at 72 dpi", async () => {
    const path = await writePdf("huge-square.pdf", [{ mediaBox: [0, 0, 14400, 14400], text: { x: 1000, y: 13000, size: 2000, s: "Big" } }]);
    assert.deepEqual((await inspectPdf(path, LIMITS)).pages, [{ width: 14400, height: 14400 }]);
    const pages = await renderPages(path, outDir(), { widths: WIDTHS, limits: LIMITS });
    assert.deepEqual(pages.map((p) => [p.width, p.height]), [[WIDTHS.read, WIDTHS.read], [WIDTHS.thumb, WIDTHS.thumb]]);
    // …unless the limit says otherwise: a square page at the reading width is over a million pixels.
    await rejectsWith(renderPages(path, outDir(), { widths: WIDTHS, limits: { ...LIMITS, maxPagePixels: 1e6 } }), "limits");
  });

  test("an external command that uses its time limit on the processor is killed → limits; one that only sleeps is held back, not too slow", async () => {
    // Limits are the converter's own processor time (cpu-watch.ts, issue 23 item 0e).
    await rejectsWith(runPoppler("sh", () => ["-c", "while :; do :; done"], { timeoutMs: 300, sandbox: DEFAULT_SANDBOX }), "limits");
    // A window of one second for this command only: left in place, it judged the 352-page book's
    // pdftoppm stalled when a loaded machine gave it no processor time for a second.
    const window = configureStallWindow(1000);
    try {
      const started = performance.now();
      const held = await runPoppler("sleep", () => ["30"], { timeoutMs: 200, sandbox: DEFAULT_SANDBOX }).then(() => undefined, (e: unknown) => e);
      assert.equal(machineFaultOf(held), "stalled", String(held));
      assert.ok(performance.now() - started < 20_000, "the sleeping command was not killed within the stall window");
    } finally {
      configureStallWindow(window);
    }
  });

  test("aborting renderPages stops it and leaves no scratch files", { timeout: 60_000 }, async () => {
    const dir = outDir();
    const ac = new AbortController();
    let seen = 0;
    await assert.rejects(
      renderPages(BOOK, dir, {
        widths: WIDTHS,
        limits: LIMITS,
        signal: ac.signal,
        onPage: () => {
          if (++seen === 1) ac.abort();
        },
      }),
      { name: "AbortError" },
    );
    assert.deepEqual(await scratchLeft(dir), []);
    assert.ok((await readdir(dir)).length < 100, "rendering went on after the abort");
  });
});

describe("renderPages", () => {
  let pages: RenderedPage[];
  const seen: RenderedPage[] = [];
  let dir: string;

  before(async () => {
    dir = outDir();
    pages = await renderPages(TCPDF, dir, { widths: WIDTHS, limits: LIMITS, onPage: (p) => seen.push(p) });
  });

  test("the 14-page PDF gives 28 images at the requested widths, in order", async () => {
    assert.equal(pages.length, 28);
    assert.equal(seen.length, 28);
    assert.deepEqual(
      pages.map((p) => `${p.page}${p.size}`),
      Array.from({ length: 14 }, (_, i) => [`${i + 1}read`, `${i + 1}thumb`]).flat(),
    );
    for (const p of pages) {
      const meta = await sharp(p.path).metadata();
      const want = WIDTHS[p.size];
      assert.equal(meta.width, want, p.path);
      assert.equal(p.width, want);
      assert.equal(meta.height, p.height);
      // A4 portrait: height follows the page's aspect ratio.
      assert.ok(Math.abs(p.height - (want * 841.89) / 595.276) <= 1.5, `${p.path}: ${p.height}`);
      assert.equal(p.bytes, (await stat(p.path)).size);
      assert.equal(p.path.startsWith(dir), true);
    }
  });

  test("the images are not blank", async () => {
    for (const p of pages) {
      const { channels } = await sharp(p.path).stats();
      assert.ok(channels.some((c) => c.stdev > 0), `${p.path} is blank`);
    }
  });

  test("a page range renders those pages only; a range outside the document is refused", async () => {
    const d = outDir();
    const out = await renderPages(TCPDF, d, { widths: WIDTHS, limits: LIMITS, firstPage: 3, lastPage: 5 });
    assert.deepEqual(out.map((p) => `${p.page}${p.size}`), ["3read", "3thumb", "4read", "4thumb", "5read", "5thumb"]);
    assert.equal((await readdir(d)).length, 6);
    for (const [firstPage, lastPage] of [[0, 2], [5, 4], [14, 15], [1.5, 3]]) {
      await assert.rejects(renderPages(TCPDF, outDir(), { widths: WIDTHS, limits: LIMITS, firstPage, lastPage }), RangeError, `${firstPage}..${lastPage}`);
    }
  });

  test("no scratch files stay behind", async () => {
    assert.deepEqual(await scratchLeft(dir), []);
  });

  test("a rotated page renders as displayed (landscape)", async () => {
    const [read, thumb] = await renderPages(join(FIXTURES, "pdf-rotated-page.pdf"), outDir(), { widths: WIDTHS, limits: LIMITS });
    assert.ok(read && thumb);
    assert.equal(read.width, WIDTHS.read);
    assert.ok(Math.abs(read.height - (WIDTHS.read * 595) / 842) <= 1.5, `${read.height}`);
    assert.ok(thumb.width > thumb.height);
  });

  test("pages of mixed sizes and quarter turns in one document are each exactly the requested widths", async () => {
    // poppler's -scale-to-x measures a page before /Rotate: a quarter-turned page must not come out as
    // wide as it is tall, nor be cut to the width.
    const a4 = { mediaBox: [0, 0, 595, 842], text: { x: 50, y: 400, size: 40, s: "Turned" } };
    const wide = { mediaBox: [0, 0, 400, 300], text: { x: 20, y: 150, size: 30, s: "Wide" } };
    const path = await writePdf("mixed-turns.pdf", [a4, { ...a4, rotate: 90 }, { ...wide, rotate: 270 }, wide, { ...a4, rotate: 90 }]);
    const out = await renderPages(path, outDir(), { widths: WIDTHS, limits: LIMITS });
    const displayed = [[595, 842], [842, 595], [300, 400], [400, 300], [842, 595]] as const;
    assert.equal(out.length, 10);
    for (const p of out) {
      const [w, h] = displayed[p.page - 1] ?? [NaN, NaN];
      const want = WIDTHS[p.size];
      const meta = await sharp(p.path).metadata();
      assert.equal(meta.width, want, `page ${p.page} ${p.size}`);
      assert.equal(meta.height, p.height);
      assert.ok(Math.abs(p.height - (want * h) / w) <= 1.5, `page ${p.page} ${p.size}: ${p.height}`);
      const { channels } = await sharp(p.path).stats();
      assert.ok(channels.some((c) => c.stdev > 0), `${p.path} is blank`);
    }
  });

  for (const [file, count] of [
    ["pdf-owner-password-only-nocopy.pdf", 1],
    ["bad/pdf-invalid-xref-entry-renders.pdf", 2],
    ["bad/pdf-junk-header-missing-startxref.pdf", 1],
  ] as const) {
    test(`${file} renders ${count} page(s)`, async () => {
      const out = await renderPages(join(FIXTURES, file), outDir(), { widths: WIDTHS, limits: LIMITS });
      assert.equal(out.length, count * 2);
      for (const p of out) {
        const { channels } = await sharp(p.path).stats();
        assert.ok(channels.some((c) => c.stdev > 0), `${p.path} is blank`);
      }
    });
  }

  test("the 352-page book renders in batches without holding its pages in memory", { timeout: 240_000 }, async () => {
    const d = outDir();
    let peak = 0;
    let count = 0;
    const before = process.memoryUsage().rss;
    const out = await renderPages(BOOK, d, {
      widths: WIDTHS,
      limits: LIMITS,
      onPage: () => {
        count++;
        peak = Math.max(peak, process.memoryUsage().rss);
      },
    });
    assert.equal(out.length, 704);
    assert.equal(count, 704);
    // Its 352 pages decoded at 1200 px would be about 2.3 GB; a batch at a time is a few tens of MB.
    assert.ok(peak - before < 600e6, `RSS grew by ${Math.round((peak - before) / 1e6)} MB`);
    assert.deepEqual(await scratchLeft(d), []);
    await rm(d, { recursive: true, force: true });
  });
});

describe("renderCovers", () => {
  test("three covers of the first page, 150/300/600 px wide", async () => {
    const dir = outDir();
    const c = await renderCovers(TCPDF, dir, LIMITS);
    assert.equal(c.width, 600);
    assert.ok(Math.abs(c.height - (600 * 841.89) / 595.276) <= 1.5);
    for (const [path, w] of [[c.small, 150], [c.medium, 300], [c.large, 600]] as const) {
      assert.ok(path.startsWith(dir));
      const meta = await sharp(path).metadata();
      assert.equal(meta.width, w);
      const { channels } = await sharp(path).stats();
      assert.ok(channels.some((ch) => ch.stdev > 0));
    }
    const large = await sharp(c.large).metadata();
    assert.equal(large.height, c.height);
    assert.deepEqual(await scratchLeft(dir), []);
  });

  test("from page 1 as renderPages made it: the same covers, without rendering again", async () => {
    const dir = outDir();
    const pdf = join(FIXTURES, "pdf-quartz-firefox-1page.pdf");
    const pages = await renderPages(pdf, join(dir, "pages"), { widths: WIDTHS, limits: LIMITS });
    const first = pages.find((p) => p.page === 1 && p.size === "read");
    assert.ok(first);
    const rendered = await renderCovers(pdf, join(dir, "rendered"), LIMITS);
    // A missing PDF proves the page image alone was used.
    const derived = await renderCovers(join(dir, "no-such.pdf"), join(dir, "derived"), LIMITS, first);
    assert.equal(derived.width, rendered.width);
    assert.ok(Math.abs(derived.height - rendered.height) <= 1, `${derived.height} vs ${rendered.height}`);
    for (const [path, w] of [[derived.small, 150], [derived.medium, 300], [derived.large, 600]] as const) {
      assert.ok(path.startsWith(join(dir, "derived")));
      assert.equal((await sharp(path).metadata()).width, w);
    }
    // A page image narrower than the large cover is not enlarged: page 1 is rendered instead.
    const small = await renderPages(pdf, join(dir, "small"), { widths: { thumb: 100, read: 400 }, limits: LIMITS });
    const narrow = small.find((p) => p.page === 1 && p.size === "read");
    const again = await renderCovers(pdf, join(dir, "again"), LIMITS, narrow);
    assert.equal(again.width, 600);
    assert.equal((await sharp(again.large).metadata()).width, 600);
  });

  test("a rotated first page gives a landscape cover", async () => {
    const c = await renderCovers(join(FIXTURES, "pdf-rotated-page.pdf"), outDir(), LIMITS);
    assert.equal(c.width, 600);
    assert.ok(c.height < c.width);
  });
});

describe("extractText", () => {
  let pages: PageText[];
  before(async () => {
    pages = await extractText(TCPDF, LIMITS);
  });

  test("one entry per page, page 1 with its words and boxes within the page", () => {
    assert.deepEqual(pages.map((p) => p.page), Array.from({ length: 14 }, (_, i) => i + 1));
    const first = pages[0];
    assert.ok(first && first.words.length > 100);
    for (const w of first.words) {
      for (const v of [w.x, w.y, w.w, w.h, w.x + w.w, w.y + w.h]) assert.ok(v >= 0 && v <= 1 + 1e-9, JSON.stringify(w));
      assert.ok(w.text.length > 0);
    }
    // Reading order: the header comes first, the sample sentence under the table last.
    assert.deepEqual(first.words.slice(0, 3).map((w) => w.text), ["TCPDF", "Example", "055"]);
    assert.match(first.text, /The quick brown fox jumps over the lazy dog/);
    const fox = first.words.find((w) => w.text === "fox");
    assert.ok(fox && fox.y > 0.5 && fox.x > 0.2 && fox.x < 0.8, JSON.stringify(fox));
  });

  test("non-ASCII survives", () => {
    const words = new Set(pages[0]?.words.map((w) => w.text));
    for (const ch of ["€", "ß", "Æ", "ÿ", "Œ"]) assert.ok(words.has(ch), `missing ${ch}`);
  });

  test("word boxes line up with the ink, on a cropped and rotated page", async () => {
    const text = { x: 150, y: 600, size: 30, s: "Hello" };
    const box = { mediaBox: [0, 0, 600, 800], cropBox: [100, 100, 500, 700], text };
    const path = await writePdf("boxes.pdf", [box, { ...box, rotate: 90 }, { ...box, rotate: 270 }]);
    const got = await extractText(path, LIMITS);
    const images = await renderPages(path, outDir(), { widths: { thumb: 100, read: 600 }, limits: LIMITS });
    for (const p of got) {
      const [word] = p.words;
      assert.ok(word && word.text === "Hello" && p.words.length === 1, JSON.stringify(p));
      const img = images.find((i) => i.page === p.page && i.size === "read");
      assert.ok(img);
      const { data, info } = await sharp(img.path).greyscale().raw().toBuffer({ resolveWithObject: true });
      let [x0, y0, x1, y1] = [Infinity, Infinity, -1, -1];
      for (let y = 0; y < info.height; y++) {
        for (let x = 0; x < info.width; x++) {
          if ((data[y * info.width + x] ?? 255) < 128) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
        }
      }
      // The ink sits inside the word's box (which includes ascender/descender room), give or take 2%.
      const tol = 0.02;
      assert.ok(x0 / info.width >= word.x - tol && x1 / info.width <= word.x + word.w + tol, `page ${p.page} x: ${JSON.stringify(word)} vs ${x0}-${x1}/${info.width}`);
      assert.ok(y0 / info.height >= word.y - tol && y1 / info.height <= word.y + word.h + tol, `page ${p.page} y: ${JSON.stringify(word)} vs ${y0}-${y1}/${info.height}`);
    }
  });

  test("the book: 352 pages, text XML can carry, non-ASCII punctuation kept", { timeout: 60_000 }, async () => {
    const book = await extractText(BOOK, LIMITS);
    assert.equal(book.length, 352);
    // eslint-disable-next-line no-control-regex -- looking for control characters
    const bad = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
    for (const p of book) {
      assert.ok(!bad.test(p.text), `page ${p.page}`);
      for (const w of p.words) assert.ok(w.text.length > 0 && !/\s/.test(w.text));
    }
    assert.match(book[19]?.text ?? "", /^On the day after Christmas, 1933/);
    assert.ok(book.some((p) => p.text.includes("—")));
    const summary = summarize(book);
    assert.ok(summary.length > 200 && summary.length <= 1000, `${summary.length}`);
  });

  test("owner-password-only PDF gives its text", async () => {
    const [p] = await extractText(join(FIXTURES, "pdf-owner-password-only-nocopy.pdf"), LIMITS);
    assert.ok(p && p.words.length > 0);
  });
});

describe("xmlSafe", () => {
  test("drops what XML 1.0 cannot carry, keeps the rest", () => {
    assert.equal(xmlSafe("a\u0000b\u0007c\u001Fd\uFFFEe\uFFFF"), "abcde");
    assert.equal(xmlSafe("tab\there\nline\r"), "tab\there\nline\r");
    assert.equal(xmlSafe("lone \uD800 high, lone \uDC00 low, pair 😀"), "lone  high, lone  low, pair 😀");
    assert.equal(xmlSafe("Ærø — “quoted” 日本語"), "Ærø — “quoted” 日本語");
  });
});

describe("summarize", () => {
  const pagesOf = (...texts: string[]): PageText[] => texts.map((text, i) => ({ page: i + 1, text, words: [] }));

  test("short text whole, whitespace collapsed, control and format characters gone", () => {
    assert.equal(summarize(pagesOf("  Hello\t\tworld\n\nagain  ")), "Hello world again");
    assert.equal(summarize(pagesOf("A\u0000B\u0007C soft\u00ADhyphen\u200Bzero \uFEFFbom")), "A B C softhyphen zero bom");
    assert.equal(summarize(pagesOf("Ærø café — 日本語のテキスト")), "Ærø café — 日本語のテキスト");
  });

  test("starts at the first meaningful text", () => {
    assert.equal(summarize(pagesOf("1", "  ", "• • •", "— Chapter one. It begins.", "More.")), "Chapter one. It begins. More.");
    assert.equal(summarize(pagesOf("2009 annual report")), "2009 annual report");
    assert.equal(summarize(pagesOf("", "3", "")), "");
    assert.equal(summarize([]), "");
  });

  test("long text: cut at the last sentence end within the limit", () => {
    const sentence = "This sentence has exactly fifty characters in it. ";
    const text = sentence.repeat(40).trim();
    const s = summarize(pagesOf(text));
    assert.equal(s.length, 1000 - 1); // 20 sentences, without the trailing space
    assert.ok(s.endsWith("in it."));
    assert.ok(text.startsWith(s));
    const short = summarize(pagesOf(text), 120);
    assert.equal(short, sentence.repeat(2).trim());
  });

  test("no sentence end in reach: cut at a word boundary", () => {
    const text = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
    const s = summarize(pagesOf(text), 100);
    assert.ok(s.length <= 100);
    assert.ok(text.startsWith(s));
    assert.equal(text[s.length], " ", "cut inside a word");
    // An early sentence end does not make the description needlessly short.
    const early = "Short. " + text;
    const e = summarize(pagesOf(early), 100);
    assert.ok(e.length > 90 && e.length <= 100 && early[e.length] === " ", e);
  });

  test("a word ending exactly at the limit is kept; trailing punctuation of a cut is dropped", () => {
    assert.equal(summarize(pagesOf("abc def ghi"), 7), "abc def");
    assert.equal(summarize(pagesOf("abc, def, ghi"), 11), "abc, def");
  });

  test("one unbroken run is cut by characters, never inside a surrogate pair", () => {
    assert.equal(summarize(pagesOf("x".repeat(50)), 10), "x".repeat(10));
    const astral = "𠮷".repeat(20); // a CJK ideograph outside the BMP: 40 UTF-16 code units
    const s = summarize(pagesOf(astral), 9);
    assert.equal(s, "𠮷".repeat(4));
    assert.ok(s.length <= 9);
  });

  test("default limit is 1000 characters", () => {
    const s = summarize(pagesOf("Lorem ipsum dolor sit amet. ".repeat(100)));
    assert.ok(s.length <= 1000 && s.length > 900 && s.endsWith("amet."));
  });
});
