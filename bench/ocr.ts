/**
 * OCR quality and speed (`npm run bench -- ocr`): for every fixture with a `<file>.gt.txt`, the
 * character error rate of the text Quire would publish (extracted text where a page has a text
 * layer, OCR of src/convert/ocr.ts elsewhere) beside plain `tesseract PAGE stdout -l eng` on the
 * same pages (the method of the fixtures' MANIFEST: PDF pages rendered by `pdftoppm -r 300 -png`,
 * images given to tesseract as they are), both measured in this run, one page at a time with
 * OMP_THREAD_LIMIT=1, so pages per minute are per core. Times are CPU seconds of the bench and its
 * children (the machine may be shared: wall time says how busy it was).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { cpuSeconds, exec, FIXTURES } from "./bench-common.ts";
import { ocrPage } from "../src/convert/ocr.ts";
import { imageFramesForOcr, renderPdfPageForOcr, type OcrImage, type RawPixels } from "../src/convert/ocr-image.ts";
import { DEFAULT_OCR_LANGUAGES, ocrLanguages } from "../src/domain/ocr-languages.ts";
import { needsOcr } from "../src/convert/ocr-needed.ts";
import { installedLanguages } from "../src/convert/ocr-tesseract.ts";
import { inspectPdf } from "../src/convert/pdf-inspect.ts";
import { extractText } from "../src/convert/pdf-text.ts";

const LIMITS = { maxPages: 2000, maxPagePixels: 100e6, timeoutMs: 300_000 };
const TIMEOUT_MS = 300_000;

/** MANIFEST's CER: Levenshtein over code points / ground-truth length, NFC, whitespace runs as one space. */
export function cer(truth: string, got: string): number {
  const norm = (s: string) => [...s.normalize("NFC").replace(/\s+/gu, " ").trim()];
  const a = norm(truth);
  const b = norm(got);
  if (a.length === 0) return b.length === 0 ? 0 : 1;
  let prev = new Uint32Array(b.length + 1).map((_, j) => j);
  let cur = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur[j] = Math.min(sub, (prev[j] as number) + 1, (cur[j - 1] as number) + 1);
    }
    [prev, cur] = [cur, prev];
  }
  return (prev[b.length] as number) / a.length;
}

function tesseractText(path: string, lang: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("tesseract", [path, "stdout", "-l", lang], { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, OMP_THREAD_LIMIT: "1" } });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

/** Only the bench needs this: sharp cannot read BMP, the formats work decodes it for the pipeline. */
async function bmp24(path: string): Promise<RawPixels> {
  const b = await readFile(path);
  const offset = b.readUInt32LE(10);
  const width = b.readInt32LE(18);
  const rawHeight = b.readInt32LE(22);
  if (b.readUInt16LE(28) !== 24 || b.readUInt32LE(30) !== 0) throw new Error("bench reads 24-bit BI_RGB BMP only");
  const height = Math.abs(rawHeight);
  const stride = Math.ceil((width * 3) / 4) * 4;
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    const row = offset + (rawHeight > 0 ? height - 1 - y : y) * stride;
    for (let x = 0; x < width; x++) {
      data[(y * width + x) * 3] = b[row + x * 3 + 2] as number;
      data[(y * width + x) * 3 + 1] = b[row + x * 3 + 1] as number;
      data[(y * width + x) * 3 + 2] = b[row + x * 3] as number;
    }
  }
  return { data, width, height, channels: 3, density: Math.round((b.readInt32LE(38) * 254) / 10000) || undefined };
}

interface Side {
  text: string;
  ocrPages: number;
  cpu: number;
  wall: number;
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; cpu: number; wall: number }> {
  const c = cpuSeconds();
  const t = performance.now();
  const value = await f();
  return { value, cpu: cpuSeconds() - c, wall: (performance.now() - t) / 1000 };
}

/** What Quire publishes: each page's text layer when it has one, else OCR of our rendering. */
async function quire(file: string, languages: string[], scratch: string): Promise<Side> {
  const path = join(FIXTURES, file);
  const texts: string[] = [];
  let ocrPages = 0;
  let cpu = 0;
  let wall = 0;
  const ocrOne = async (image: () => Promise<OcrImage | undefined>) => {
    const r = await timed(async () => {
      const img = await image();
      return img ? (await ocrPage(img, { languages, timeoutMs: TIMEOUT_MS, tmpDir: scratch })).text : "";
    });
    ocrPages++;
    cpu += r.cpu;
    wall += r.wall;
    return r.value;
  };
  if (file.endsWith(".pdf")) {
    const info = await inspectPdf(path, LIMITS);
    const extracted = await extractText(path, LIMITS);
    for (const p of extracted) {
      if (!needsOcr(p)) texts.push(p.text);
      else texts.push(await ocrOne(() => renderPdfPageForOcr(path, p.page, info.pages[p.page - 1]!, scratch, { timeoutMs: TIMEOUT_MS })));
    }
  } else {
    // Frames are prepared one by one inside the timing, as the pipeline would.
    const c = cpuSeconds();
    const t = performance.now();
    const frames = await imageFramesForOcr(file.endsWith(".bmp") ? await bmp24(path) : path, scratch);
    cpu += cpuSeconds() - c;
    wall += (performance.now() - t) / 1000;
    for (const f of frames) texts.push(await ocrOne(async () => f));
  }
  return { text: texts.join("\f"), ocrPages, cpu, wall };
}

/** The MANIFEST's plain method: pdftoppm -r 300 -png then tesseract per page; images as they are. */
async function plain(file: string, lang: string, scratch: string): Promise<Side> {
  const path = join(FIXTURES, file);
  if (!file.endsWith(".pdf")) {
    const r = await timed(() => tesseractText(path, lang));
    const pages = r.value.split("\f").length - (r.value.endsWith("\f") ? 1 : 0);
    return { text: r.value, ocrPages: Math.max(1, pages), cpu: r.cpu, wall: r.wall };
  }
  const { pageCount } = await inspectPdf(path, LIMITS);
  const texts: string[] = [];
  let cpu = 0;
  let wall = 0;
  for (let p = 1; p <= pageCount; p++) {
    const r = await timed(async () => {
      const prefix = join(scratch, `plain-${p}`);
      await exec("pdftoppm", ["-r", "300", "-png", "-f", String(p), "-l", String(p), "-singlefile", path, prefix]);
      return tesseractText(`${prefix}.png`, lang);
    });
    texts.push(r.value);
    cpu += r.cpu;
    wall += r.wall;
  }
  return { text: texts.join("\f"), ocrPages: pageCount, cpu, wall };
}

interface Row {
  file: string;
  language: string;
  pages: number;
  quire: Side;
  plainEng: Side;
  plainSame?: Side;
  cerQuire: number;
  cerPlain: number;
  cerPlainSame?: number;
}

const pct = (v: number | undefined) => (v === undefined ? "-" : `${(v * 100).toFixed(1)} %`);
const pad = (s: string, n: number) => s.padEnd(n);

export async function benchOcr(): Promise<void> {
  sharp.concurrency(1);
  const installed = await installedLanguages();
  const defaults = ocrLanguages(undefined, DEFAULT_OCR_LANGUAGES, installed);
  const everything = [...installed].filter((l) => l !== "osd").sort((a, b) => (a === "eng" ? -1 : b === "eng" ? 1 : a.localeCompare(b)));
  const files = (await readdir(FIXTURES)).filter((f) => f.endsWith(".gt.txt")).map((f) => f.slice(0, -".gt.txt".length)).sort();
  // Rows with the language Quire would use: the default list, and where a document's language is
  // known (or its text is in several), the document language set, or every installed one.
  const variants: { file: string; label: string; languages: string[] }[] = [];
  for (const f of files) {
    variants.push({ file: f, label: `default (${defaults.join("+")})`, languages: defaults });
    if (f.includes("french")) variants.push({ file: f, label: "language=fr", languages: ocrLanguages("fr", DEFAULT_OCR_LANGUAGES, installed) });
    if (f.includes("eurotext")) {
      variants.push({ file: f, label: "eng+deu+fra+spa", languages: ["eng", "deu", "fra", "spa"].filter((l) => installed.has(l)) });
      variants.push({ file: f, label: `all installed`, languages: everything });
    }
  }
  const rows: Row[] = [];
  for (const v of variants) {
    const scratch = await mkdtemp(join(tmpdir(), "quire-bench-ocr-"));
    try {
      const truth = await readFile(join(FIXTURES, `${v.file}.gt.txt`), "utf8");
      const plainEng = await plain(v.file, "eng", scratch);
      const q = await quire(v.file, v.languages, scratch);
      const same = v.languages.join("+") !== "eng" ? await plain(v.file, v.languages.join("+"), scratch) : undefined;
      rows.push({
        file: v.file,
        language: v.label,
        pages: truth.split("\f").length,
        quire: q,
        plainEng,
        plainSame: same,
        cerQuire: cer(truth, q.text),
        cerPlain: cer(truth, plainEng.text),
        cerPlainSame: same ? cer(truth, same.text) : undefined,
      });
      const r = rows.at(-1) as Row;
      process.stdout.write(`${pad(r.file, 46)} ${pad(r.language, 36)} ${String(r.pages).padStart(2)}p  CER quire ${pct(r.cerQuire).padStart(7)}  plain -l eng ${pct(r.cerPlain).padStart(7)}  plain same -l ${pct(r.cerPlainSame).padStart(7)}  cpu s quire ${r.quire.cpu.toFixed(2).padStart(6)} (${r.quire.ocrPages} OCR'd)  plain ${r.plainEng.cpu.toFixed(2).padStart(6)}${r.plainSame ? ` same -l ${r.plainSame.cpu.toFixed(2)}` : ""}  wall s ${r.quire.wall.toFixed(1)} / ${r.plainEng.wall.toFixed(1)}\n`);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  // Speed over the default-language rows: the pages each side OCR'd, CPU time per core.
  const base = rows.filter((r) => r.language.startsWith("default"));
  const qPages = base.reduce((s, r) => s + r.quire.ocrPages, 0);
  const qCpu = base.reduce((s, r) => s + r.quire.cpu, 0);
  const pPages = base.reduce((s, r) => s + r.plainEng.ocrPages, 0);
  const pCpu = base.reduce((s, r) => s + r.plainEng.cpu, 0);
  const qRate = (qPages / qCpu) * 60;
  const pRate = (pPages / pCpu) * 60;
  const clean = base.filter((r) => r.cerPlain < 0.05);
  const worse = base.filter((r) => r.cerQuire > r.cerPlain + 1e-9);
  process.stdout.write(
    `\nOCR pages per CPU-minute (one page at a time, OMP_THREAD_LIMIT=1, rendering included): Quire ${qRate.toFixed(1)} (${qPages} pages), plain tesseract ${pRate.toFixed(1)} (${pPages} pages); ratio ${(qRate / pRate).toFixed(2)} (target >= 0.9)\n` +
      `Documents where Quire's CER is above plain's (default languages): ${worse.length ? worse.map((r) => r.file).join(", ") : "none"}\n` +
      `Clean scans (plain CER < 5 %) where Quire's CER is 5 % or more: ${clean.filter((r) => r.cerQuire >= 0.05).map((r) => r.file).join(", ") || "none"}\n`,
  );
}
