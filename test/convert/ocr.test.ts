import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { recognizePages } from "../../src/convert/page-ocr.ts";
import { after, before, describe, it } from "node:test";
import sharp from "sharp";
import { ConversionError } from "../../src/convert/conversion-error.ts";
import { imageToPdf } from "../../src/convert/image-pages.ts";
import { deadlineSignal, inParallel, ocrPage, ocrPdfPages, unturnWords } from "../../src/convert/ocr.ts";
import { ocrDpi } from "../../src/convert/ocr-image.ts";
import { inspectPdf } from "../../src/convert/pdf-inspect.ts";
import { ISO_639_1_TO_TESSERACT, ocrLanguages, parseLanguageList } from "../../src/domain/ocr-languages.ts";
import { needsOcr, textLayerVerdict } from "../../src/convert/ocr-needed.ts";
import { installedLanguages, parseTsv, tsvToWords } from "../../src/convert/ocr-tesseract.ts";
import { extractText } from "../../src/convert/pdf-text.ts";
import { cer } from "../../bench/ocr.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { until } from "../helpers/poll.ts";
import { DEFAULT_SANDBOX } from "../../src/convert/sandbox.ts";

const PHOTOTEST = join(FIXTURES, "ocr-phototest-tesseract.tif");
const GT_FIRST_LINE = readFileSync(`${PHOTOTEST}.gt.txt`, "utf8").split("\n")[0] as string;
const LIMITS = { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 60_000, sandbox: DEFAULT_SANDBOX };
const OPTS = { languages: ["eng"], timeoutMs: 120_000, concurrency: 1, sandbox: DEFAULT_SANDBOX };

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), "quire-ocr-test-"));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Tesseract processes whose command line mentions `needle`. */
/** Tesseract processes reading `image`: the sandbox's outer process names its folder, tesseract inside names /in/<file>. */
function tesseractsWith(image: string): number[] {
  const needles = [dirname(image), `/in/${basename(image)}`];
  const pids: number[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes("tesseract") && needles.some((n) => cmd.includes(n))) pids.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

describe("OCR of a page", () => {
  let upright: Awaited<ReturnType<typeof ocrPage>>;

  it("reads phototest: its first line, and the word 'quick' with a box inside the page where it is printed", async () => {
    const page = await ocrPage(PHOTOTEST, { ...OPTS, tmpDir: scratch });
    upright = page;
    assert.equal(page.rotation, 0);
    const first = page.text.split("\n")[0] as string;
    assert.ok(cer(GT_FIRST_LINE, first) < 0.05, `first line read as ${JSON.stringify(first)}`);
    const quick = page.words.find((w) => w.text === "quick");
    assert.ok(quick, "the word 'quick' is found");
    for (const v of [quick.x, quick.y, quick.x + quick.w, quick.y + quick.h]) assert.ok(v > 0 && v < 1);
    // "The quick brown dog" is the fourth line, at the left: about 0.16 across, 0.4 down the 640×480 page.
    assert.ok(Math.abs(quick.x - 0.16) < 0.03 && Math.abs(quick.y - 0.4) < 0.03, JSON.stringify(quick));
    assert.ok(quick.w > 0.05 && quick.w < 0.2 && quick.h > 0.02 && quick.h < 0.1, JSON.stringify(quick));
    // Text and words agree: the text is the words, lines by "\n".
    assert.equal(page.text.replace(/\n/g, " "), page.words.map((w) => w.text).join(" "));
    assert.deepEqual(await readdir(scratch), []);
  });

  for (const turn of [90, 180]) {
    it(`turns a page scanned ${turn}° upright first, and reads the same words at the same places`, async () => {
      const turned = join(scratch, `turned-${turn}.png`);
      await sharp(PHOTOTEST).rotate(turn).grayscale().png().toFile(turned);
      const got = await ocrPage({ path: turned, dpi: 200 }, { ...OPTS, tmpDir: scratch });
      await rm(turned);
      assert.equal((got.rotation + turn) % 360, 0, `rotation ${got.rotation}`);
      assert.ok(cer(upright.text, got.text) < 0.02, got.text.slice(0, 200));
      const a = upright.words.find((w) => w.text === "quick");
      const b = got.words.find((w) => w.text === "quick");
      assert.ok(a && b);
      assert.ok(Math.abs(a.x - b.x) < 0.02 && Math.abs(a.y - b.y) < 0.02, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      // Mapped back onto the page as stored, the box is where the turned image has the word.
      const [back] = unturnWords([b], got.rotation);
      assert.ok(back);
      if (turn === 180) assert.ok(Math.abs(back.x - (1 - a.x - a.w)) < 0.02 && Math.abs(back.y - (1 - a.y - a.h)) < 0.02);
      else assert.ok(Math.abs(back.x - (1 - a.y - a.h)) < 0.02 && Math.abs(back.y - a.x) < 0.02 && Math.abs(back.w - a.h) < 0.02);
      assert.deepEqual(await readdir(scratch), []);
    });
  }

  it("gives an empty result, not an error, for a file that is no image or a damaged one", async () => {
    const junk = join(scratch, "junk.png");
    await writeFile(junk, "this is not an image at all\n".repeat(50));
    assert.deepEqual(await ocrPage(junk, OPTS), { text: "", words: [], rotation: 0 });
    const half = join(scratch, "half.tif");
    await writeFile(half, readFileSync(PHOTOTEST).subarray(0, 2000));
    assert.deepEqual((await ocrPage(half, OPTS)).words, []);
    await rm(junk);
    await rm(half);
  });

  it("fails with 'limits' when a page takes longer than its time limit, and leaves no tesseract behind", async () => {
    const dir = await mkdtemp(join(scratch, "limit-"));
    // Limits are processor time, looked at once a second (cpu-watch.ts): the page must take Tesseract
    // longer than that, so it is read at four times its size.
    const big = join(scratch, "big-phototest.png");
    const meta = await sharp(PHOTOTEST).metadata();
    await sharp(PHOTOTEST).resize((meta.width ?? 1000) * 4).png().toFile(big);
    await assert.rejects(
      ocrPage(big, { ...OPTS, timeoutMs: 1, tmpDir: dir }),
      (e: unknown) => e instanceof ConversionError && e.kind === "limits" && e.code === 5,
    );
    assert.deepEqual(await readdir(dir), []);
    assert.deepEqual(tesseractsWith(dir), []);
    await rm(dir, { recursive: true });
    await rm(big);
  });

  it("on abort kills tesseract at once and removes its files", async () => {
    const dir = await mkdtemp(join(scratch, "abort-"));
    // A page big enough to take seconds: phototest enlarged four times.
    const big = join(dir, "big.png");
    await sharp(PHOTOTEST).resize({ width: 2560 }).png().toFile(big);
    const stop = new AbortController();
    const running = ocrPage({ path: big, dpi: 800 }, { ...OPTS, signal: stop.signal, tmpDir: dir });
    await until(() => tesseractsWith(big).length > 0, 60_000, "a tesseract on the big page", 20);
    const reason = new Error("job cancelled");
    stop.abort(reason);
    await assert.rejects(running, (e: unknown) => e === reason);
    assert.deepEqual(tesseractsWith(big), []);
    await rm(big);
    assert.deepEqual(await readdir(dir), []);
    await rm(dir, { recursive: true });
  });
});

describe("pages in parallel", () => {
  it("runs at most `concurrency` tasks at once, keeps their order, and gives each a scratch folder removed after it", async () => {
    let running = 0;
    let most = 0;
    const dirs: string[] = [];
    const base = await mkdtemp(join(scratch, "parallel-"));
    const out = await inParallel(7, { concurrency: 3, tmpDir: base }, async (i, dir) => {
      running++;
      most = Math.max(most, running);
      dirs.push(dir);
      await writeFile(join(dir, "page.png"), "x");
      await new Promise((r) => setTimeout(r, 10 + (i % 3) * 5));
      running--;
      return i * 10;
    });
    assert.deepEqual(out, [0, 10, 20, 30, 40, 50, 60]);
    assert.equal(most, 3);
    assert.equal(new Set(dirs).size, 7);
    assert.deepEqual(await readdir(base), []);
    await rm(base, { recursive: true });
  });

  it("stops the other pages at the first failure and throws it", async () => {
    const started: number[] = [];
    const base = await mkdtemp(join(scratch, "failing-"));
    await assert.rejects(
      inParallel(10, { concurrency: 2, tmpDir: base }, async (i, _dir, signal) => {
        started.push(i);
        if (i === 1) throw new ConversionError("limits", "too slow");
        await new Promise((r) => setTimeout(r, 50));
        signal.throwIfAborted();
        return i;
      }),
      (e: unknown) => e instanceof ConversionError && e.kind === "limits",
    );
    assert.ok(started.length < 10, `started ${started.join(",")}`);
    assert.deepEqual(await readdir(base), []);
    await rm(base, { recursive: true });
  });
});

describe("whether a page needs OCR", () => {
  it("a text layer made here from the document (LibreOffice) is never judged garbage: tables of short cells are read as they are", async () => {
    const table = { page: 1, text: "Table a b c d f h1 h2 h3 h4", words: [] };
    assert.equal(textLayerVerdict(table), "garbage", "the rule meant for scanners' layers would OCR it");
    const kept = await recognizePages("/nonexistent.pdf", [table], {
      languages: ["eng"], concurrency: 1, documentLanguage: "", sizes: [{ width: 612, height: 792 }], textLayerIsOurs: true,
      timeoutMs: 1000, sandbox: DEFAULT_SANDBOX, signal: new AbortController().signal, tmpDir: scratch,
    });
    assert.deepEqual(kept, [table], "kept without running tesseract (the PDF does not even exist)");
  });

  it("a page whose text ran past the bounds is not OCR'd, even when none of its text was kept", async () => {
    const past = { page: 1, text: "", words: [], clipped: true as const };
    const kept = await recognizePages("/nonexistent.pdf", [past], {
      languages: ["eng"], concurrency: 1, documentLanguage: "", sizes: [{ width: 612, height: 792 }], textLayerIsOurs: false,
      timeoutMs: 1000, sandbox: DEFAULT_SANDBOX, signal: new AbortController().signal, tmpDir: scratch,
    });
    assert.deepEqual(kept, [{ page: 1, text: "", words: [] }], "kept without running tesseract, and stored without the mark");
  });

  it("the mixed OCRmyPDF document: only page 4 has a text layer; the scanned PDFs have none", async () => {
    const mixed = await extractText(join(FIXTURES, "ocr-mixed-6pages-text-and-scans-ocrmypdf.pdf"), LIMITS);
    assert.deepEqual(mixed.map(needsOcr), [true, true, true, false, true, true]);
    for (const f of ["ocr-scanned-2pages-faa-advisory.pdf", "ocr-scanned-french-ocrmypdf.pdf"]) {
      const pages = await extractText(join(FIXTURES, f), LIMITS);
      assert.ok(pages.length > 0 && pages.every(needsOcr), f);
      assert.ok(pages.every((p) => textLayerVerdict(p) === "empty"), f);
    }
  });

  it("born-digital PDFs are never OCR'd, not even font tables of lone signs", async () => {
    const born = readdirSync(FIXTURES).filter((f) => f.endsWith(".pdf") && f.startsWith("pdf-"));
    assert.ok(born.length >= 5);
    for (const f of born) {
      const pages = await extractText(join(FIXTURES, f), LIMITS);
      assert.deepEqual(pages.map((p) => textLayerVerdict(p)), pages.map(() => "text"), f);
    }
    // 352 pages, part titles of one word among them: only the cover, an image, is read by OCR.
    const book = await extractText(join(FIXTURES, "bad/pdf-352-pages-freeculture.pdf"), LIMITS);
    assert.deepEqual(book.flatMap((p) => (needsOcr(p) ? [p.page] : [])), [1]);
  });

  it("garbage and negligible text layers count as no text", () => {
    assert.equal(textLayerVerdict({ text: "" }), "empty");
    assert.equal(textLayerVerdict({ text: " \n " }), "empty");
    assert.equal(textLayerVerdict({ text: "12" }), "negligible");
    assert.equal(textLayerVerdict({ text: "p. 3" }), "negligible");
    assert.equal(textLayerVerdict({ text: "AFTERWORD" }), "text");
    // Unmapped glyphs some scanners and broken fonts leave behind.
    assert.equal(textLayerVerdict({ text: "\uFFFD\uFFFD\uFFFD \uFFFD\uFFFD \uE001\uE002\uE003 Lorem ipsum dolor" }), "garbage");
    assert.equal(textLayerVerdict({ text: "Ã©Ã¨Ã  â€™Ã§ Ã¢â‚¬Å“ Ã¯Â¿Â½Ã¯Â¿Â½ #$%&@@ ~~^^]] ¦¦§§" }), "garbage");
    assert.equal(textLayerVerdict({ text: "%$#@ (*&^ )(*& ^%$# @!~` [}{] ||\\// ++==" }), "negligible");
    assert.equal(textLayerVerdict({ text: "%$#@ (*&^ a)(*& ^%$# b@!~` [}c{] ||\\// d++== ee| f-g-h-i-j-k-l" }), "garbage");
    assert.equal(textLayerVerdict({ text: "Über die Straße, naïve café — l'être et ça." }), "text");
    assert.equal(textLayerVerdict({ text: "東京都の人口は約1400万人です。" }), "text");
    assert.equal(textLayerVerdict({ text: "Total 1,234.50 EUR\n2024-01-15 12:30 50%" }), "text");
  });
});

describe("OCR languages", () => {
  it("maps ISO 639-1 to Tesseract's names, using the document language only when installed", async () => {
    const installed = await installedLanguages(DEFAULT_SANDBOX);
    for (const l of ["eng", "deu", "fra", "spa", "ita", "por", "osd"]) assert.ok(installed.has(l), l);
    assert.equal(ISO_639_1_TO_TESSERACT.en, "eng");
    assert.equal(ISO_639_1_TO_TESSERACT.pt, "por");
    assert.equal(ISO_639_1_TO_TESSERACT.zh, "chi_sim");
    assert.deepEqual(ocrLanguages("fr", ["eng"], installed), ["fra"]);
    assert.deepEqual(ocrLanguages("DE", ["eng"], installed), ["deu"]);
    assert.deepEqual(ocrLanguages("it", ["eng"], installed), ["ita"]);
    // Russian is not installed here; "xx" is no language; unset: the defaults.
    assert.deepEqual(ocrLanguages("ru", ["eng", "deu"], installed), ["eng", "deu"]);
    assert.deepEqual(ocrLanguages("xx", ["eng"], installed), ["eng"]);
    assert.deepEqual(ocrLanguages(undefined, ["eng", "fra"], installed), ["eng", "fra"]);
    assert.deepEqual(ocrLanguages("", ["rus", "osd", "fra"], installed), ["fra"]);
    assert.deepEqual(ocrLanguages("", ["rus"], installed), ["eng"]);
    assert.deepEqual(parseLanguageList("eng+deu"), ["eng", "deu"]);
    assert.deepEqual(parseLanguageList("eng, chi_sim"), ["eng", "chi_sim"]);
    assert.equal(parseLanguageList("eng;rm -rf"), undefined);
    assert.equal(parseLanguageList(""), undefined);
  });
});

describe("reading tesseract's output", () => {
  it("keeps words by line, unsure signs too, and scales boxes to the page", () => {
    const tsv = [
      "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext",
      "1\t1\t0\t0\t0\t0\t0\t0\t1000\t500\t-1\t",
      "4\t1\t1\t1\t1\t0\t100\t50\t300\t20\t-1\t",
      "5\t1\t1\t1\t1\t1\t100\t50\t100\t20\t96.5\tHello",
      "5\t1\t1\t1\t1\t2\t220\t50\t10\t20\t12.0\t|",
      "5\t1\t1\t1\t1\t3\t250\t50\t150\t20\t31.0\twörld",
      "5\t1\t1\t1\t2\t1\t100\t100\t50\t20\t90\t \t",
      "5\t1\t1\t2\t1\t1\t100\t200\t50\t20\t90\t42",
    ].join("\n");
    const got = tsvToWords(parseTsv(tsv));
    assert.equal(got.text, "Hello | wörld\n42");
    assert.deepEqual(got.words[0], { text: "Hello", x: 0.1, y: 0.1, w: 0.1, h: 0.04 });
    assert.equal(got.words.length, 4);
    assert.deepEqual(tsvToWords(parseTsv("")), { text: "", words: [] });
  });

  it("renders huge PDF pages below the pixel cap and ordinary ones at 300 dpi", () => {
    assert.equal(ocrDpi({ width: 612, height: 792 }), 300);
    const dpi = ocrDpi({ width: 2160, height: 2160 });
    assert.ok(dpi < 300 && ((2160 / 72) * dpi) ** 2 <= 25e6, String(dpi));
  });
});

describe("OCR of documents", () => {
  it("reads a scanned PDF page in the document's language, rendered by us at 300 dpi", async () => {
    const pdf = join(FIXTURES, "ocr-scanned-french-ocrmypdf.pdf");
    const [page] = await ocrPdfPages(pdf, [{ page: 1, size: { width: 216, height: 216 } }], { ...OPTS, languages: ["fra"], tmpDir: scratch });
    assert.ok(page);
    const truth = readFileSync(`${pdf}.gt.txt`, "utf8");
    assert.ok(cer(truth, page.text) < 0.03, page.text);
    assert.ok(page.words.some((w) => w.text.includes("être")));
    assert.deepEqual(await readdir(scratch), []);
  });

  it("a document's time limit ends its OCR with 'limits' and kills what runs", async () => {
    const dir = await mkdtemp(join(scratch, "deadline-"));
    const pdf = join(FIXTURES, "ocr-scanned-2pages-faa-advisory.pdf");
    const pages = [1, 2].map((page) => ({ page, size: { width: 612, height: 792 } }));
    await assert.rejects(
      ocrPdfPages(pdf, pages, { ...OPTS, concurrency: 2, signal: deadlineSignal(300), tmpDir: dir }),
      (e: unknown) => e instanceof ConversionError && e.kind === "limits",
    );
    assert.deepEqual(tesseractsWith(dir), []);
    assert.deepEqual(await readdir(dir), []);
    await rm(dir, { recursive: true });
  });

  it("reads a 50 dpi TIFF, where Tesseract finds nothing at its own pixels, enlarged to 300 dpi", async () => {
    const dir = await mkdtemp(join(scratch, "frames-"));
    const pdf = join(dir, "low.pdf");
    await imageToPdf(join(FIXTURES, "tif-multipage-2pages-alfresco.tiff"), "tif", pdf, { maxPixels: 50e6, maxPages: 10 });
    const { pages } = await inspectPdf(pdf, LIMITS);
    const read = await ocrPdfPages(pdf, pages.map((size, i) => ({ page: i + 1, size })), { ...OPTS, tmpDir: dir });
    const truth = readFileSync(join(FIXTURES, "tif-multipage-2pages-alfresco.tiff.gt.txt"), "utf8").split("\f")[0] as string;
    assert.ok(cer(truth, read[0]?.text ?? "") < 0.05, JSON.stringify(read[0]?.text));
    await rm(dir, { recursive: true });
  });
});
