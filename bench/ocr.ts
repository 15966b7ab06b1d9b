/**
 * OCR quality and speed (`npm run bench -- ocr`): for every fixture with a `<file>.gt.txt`, and for
 * small, 1-bit fax, 16-bit and colour scans made from them (bench/ocr-made-scans.ts), the
 * character error rate of the text Quire would publish (an image made a PDF as the pipeline does;
 * extracted text where a page has a text layer, OCR of src/convert/ocr.ts elsewhere) beside plain
 * `tesseract PAGE stdout -l eng` on the same pages (the method of the fixtures' MANIFEST: PDF pages
 * rendered by `pdftoppm -r 300 -png`, images given to tesseract as they are), both measured in this
 * run, one page at a time with OMP_THREAD_LIMIT=1, so pages per minute are per core. Times are CPU
 * seconds of the bench and its children (the machine may be shared: wall time says how busy it
 * was); QUIRE_BENCH_OCR_ONLY=<pattern> runs the matching rows only.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { cpuSeconds, exec, FIXTURES } from "./bench-common.ts";
import { makeScans } from "./ocr-made-scans.ts";
import { detectFormat } from "../src/detect/detect-format.ts";
import { imageToPdf } from "../src/convert/image-pages.ts";
import { ocrPdfPages } from "../src/convert/ocr.ts";
import { DEFAULT_OCR_LANGUAGES, ocrLanguages } from "../src/domain/ocr-languages.ts";
import { needsOcr } from "../src/convert/ocr-needed.ts";
import { installedLanguages } from "../src/convert/ocr-tesseract.ts";
import { inspectPdf } from "../src/convert/pdf-inspect.ts";
import { extractText } from "../src/convert/pdf-text.ts";
import type { ImageType } from "../src/domain/formats.ts";
import { DEFAULT_SANDBOX } from "../src/convert/sandbox.ts";

const LIMITS = { maxPages: 2000, maxPagePixels: 100e6, timeoutMs: 300_000, sandbox: DEFAULT_SANDBOX };
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

/**
 * What Quire publishes: an image becomes a PDF as in the pipeline (src/convert/image-pages.ts);
 * then each page's text layer when it has one, else OCR of the page as the pipeline does it
 * (ocrPdfPages, one page at a time).
 */
async function quire(path: string, languages: string[], scratch: string): Promise<Side> {
  const texts: string[] = [];
  let ocrPages = 0;
  let cpu = 0;
  let wall = 0;
  let pdf = path;
  const type = await detectFormat(path);
  if (type !== "pdf") {
    pdf = join(scratch, "image.pdf");
    const made = await timed(() => imageToPdf(path, type as ImageType, pdf, { maxPixels: 50e6, maxPages: 2000 }));
    cpu += made.cpu;
    wall += made.wall;
  }
  const info = await inspectPdf(pdf, LIMITS);
  const extracted = await extractText(pdf, LIMITS);
  for (const p of extracted) {
    if (!needsOcr(p)) {
      texts.push(p.text);
      continue;
    }
    const r = await timed(() => ocrPdfPages(pdf, [{ page: p.page, size: info.pages[p.page - 1]! }], { languages, timeoutMs: TIMEOUT_MS, concurrency: 1, tmpDir: scratch, sandbox: DEFAULT_SANDBOX }));
    texts.push(r.value[0]?.text ?? "");
    ocrPages++;
    cpu += r.cpu;
    wall += r.wall;
  }
  return { text: texts.join("\f"), ocrPages, cpu, wall };
}

/** The MANIFEST's plain method: pdftoppm -r 300 -png then tesseract per page; images as they are. */
async function plain(path: string, lang: string, scratch: string): Promise<Side> {
  if (!path.endsWith(".pdf")) {
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

/** A row: one fixture, or a set of scans made from the fixtures (bench/ocr-made-scans.ts), each file read on its own. */
interface Variant {
  file: string;
  label: string;
  languages: string[];
  files: { path: string; truth: string }[];
}

/** Both sides over a row's files, their texts and costs added up. */
async function measure(v: Variant, scratch: string): Promise<Row> {
  const sum = (a: Side | undefined, b: Side): Side => (a ? { text: `${a.text}\f${b.text}`, ocrPages: a.ocrPages + b.ocrPages, cpu: a.cpu + b.cpu, wall: a.wall + b.wall } : b);
  let q: Side | undefined;
  let plainEng: Side | undefined;
  let same: Side | undefined;
  const sameLang = v.languages.join("+") !== "eng";
  for (const f of v.files) {
    plainEng = sum(plainEng, await plain(f.path, "eng", scratch));
    q = sum(q, await quire(f.path, v.languages, scratch));
    if (sameLang) same = sum(same, await plain(f.path, v.languages.join("+"), scratch));
  }
  const truth = v.files.map((f) => f.truth).join("\f");
  return {
    file: v.file,
    language: v.label,
    pages: truth.split("\f").length,
    quire: q!,
    plainEng: plainEng!,
    plainSame: same,
    cerQuire: cer(truth, q!.text),
    cerPlain: cer(truth, plainEng!.text),
    cerPlainSame: same ? cer(truth, same.text) : undefined,
  };
}

export async function benchOcr(): Promise<void> {
  sharp.concurrency(1);
  const installed = await installedLanguages(DEFAULT_SANDBOX);
  const defaults = ocrLanguages(undefined, DEFAULT_OCR_LANGUAGES, installed);
  const everything = [...installed].filter((l) => l !== "osd").sort((a, b) => (a === "eng" ? -1 : b === "eng" ? 1 : a.localeCompare(b)));
  /** Rows whose name matches this pattern only (QUIRE_BENCH_OCR_ONLY), to measure a change quickly. */
  const only = process.env.QUIRE_BENCH_OCR_ONLY;
  const files = (await readdir(FIXTURES)).filter((f) => f.endsWith(".gt.txt")).map((f) => f.slice(0, -".gt.txt".length)).sort();
  // Rows with the language Quire would use: the default list, and where a document's language is
  // known (or its text is in several), the document language set, or every installed one.
  const variants: Variant[] = [];
  for (const f of files) {
    const one = [{ path: join(FIXTURES, f), truth: await readFile(join(FIXTURES, `${f}.gt.txt`), "utf8") }];
    variants.push({ file: f, label: `default (${defaults.join("+")})`, languages: defaults, files: one });
    if (f.includes("french")) variants.push({ file: f, label: "language=fr", languages: ocrLanguages("fr", DEFAULT_OCR_LANGUAGES, installed), files: one });
    if (f.includes("eurotext")) {
      variants.push({ file: f, label: "eng+deu+fra+spa", languages: ["eng", "deu", "fra", "spa"].filter((l) => installed.has(l)), files: one });
      variants.push({ file: f, label: `all installed`, languages: everything, files: one });
    }
  }
  // Small, 1-bit fax and 16-bit scans made from the fixtures' pages (issue 27).
  const made = await mkdtemp(join(tmpdir(), "quire-bench-scans-"));
  try {
    for (const c of await makeScans(made)) variants.push({ file: c.name, label: `default (${defaults.join("+")})`, languages: defaults, files: c.files });
    const rows: Row[] = [];
    for (const v of variants) {
      if (only && !new RegExp(only).test(v.file)) continue;
      const scratch = await mkdtemp(join(tmpdir(), "quire-bench-ocr-"));
      try {
        const r = await measure(v, scratch);
        rows.push(r);
        process.stdout.write(`${pad(r.file, 58)} ${pad(r.language, 26)} ${String(r.pages).padStart(2)}p  CER quire ${pct(r.cerQuire).padStart(7)}  plain -l eng ${pct(r.cerPlain).padStart(7)}  plain same -l ${pct(r.cerPlainSame).padStart(7)}  cpu s quire ${r.quire.cpu.toFixed(2).padStart(6)} (${r.quire.ocrPages} OCR'd)  plain ${r.plainEng.cpu.toFixed(2).padStart(6)}${r.plainSame ? ` same -l ${r.plainSame.cpu.toFixed(2)}` : ""}  wall s ${r.quire.wall.toFixed(1)} / ${r.plainEng.wall.toFixed(1)}\n`);
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    }
    summary(rows);
  } finally {
    await rm(made, { recursive: true, force: true });
  }
}

function summary(rows: Row[]): void {
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
