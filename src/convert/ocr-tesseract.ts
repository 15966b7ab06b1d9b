/**
 * The Tesseract command-line program: the one place it is started (`runTesseract`, the spawn point
 * the converter sandbox wraps), the reading of its TSV and OSD outputs, and its installed languages.
 * The CLI rather than a binding or a WASM build: Debian's packages and traineddata, no native addon
 * to build, and a hung or runaway recognition is a process we can kill.
 */
import { runSandboxed } from "./sandboxed-run.ts";
import { dirname, resolve as absolute } from "node:path";
import { ConversionError, stalledFailure } from "./conversion-error.ts";
import { sandboxView, type SandboxSettings } from "./sandbox.ts";
import { xmlSafe, type Word } from "./pdf-text.ts";
import { countOf } from "../domain/counts.ts";

/** A 25 Mpx page needs well under 1 GiB; a limit against hostile images, not a budget. */
export const TESSERACT_ADDRESS_SPACE_BYTES = 2 * 1024 ** 3;
const STDOUT_MAX = 32 * 1024 * 1024;

export interface TesseractRun {
  timeoutMs: number;
  sandbox: SandboxSettings;
  signal?: AbortSignal;
}

/**
 * Runs `tesseract IMAGE stdout ...args` (or `tesseract ...args` without an image) and resolves with
 * its stdout. The image is the only file it reads besides its traineddata
 * (/usr/share/tesseract-ocr/5/tessdata) and it writes none: that is all a sandbox must let it see. One thread per process (OMP_THREAD_LIMIT=1):
 * pages run side by side instead, which uses the cores better than OpenMP inside one page.
 * Past `timeoutMs` of processor time it is killed and becomes "limits"; held back by the machine
 * (stopped, starved: sandboxed-run.ts) it is killed and the page's job retried; on abort it is killed and the signal's reason
 * is thrown. The exit code is not trusted to mean text was found (0 with nothing on an undecodable
 * TIFF): callers judge the output.
 */
export async function runTesseract(image: string | undefined, args: string[], opts: TesseractRun): Promise<string> {
  // In the converters' sandbox, seeing the page image's folder alone, read-only; its text comes
  // back on stdout. Absolute, so a name starting with "-" is never an option.
  const folder = image === undefined ? undefined : dirname(absolute(image));
  const view = sandboxView({
    readOnly: folder === undefined ? [] : [[folder, "/in"]],
    env: { OMP_THREAD_LIMIT: "1", LC_ALL: "C.UTF-8" },
    addressSpaceBytes: TESSERACT_ADDRESS_SPACE_BYTES,
  }, opts.sandbox);
  const input = image === undefined ? [] : [view.path(absolute(image)), "stdout"];
  const run = await runSandboxed(view.command("/usr/bin/tesseract", [...input, ...args]), { ...opts, maxStdoutBytes: STDOUT_MAX });
  switch (run.kind) {
    case "exited":
      // A failed read of the image is an empty page to us, not a failed document.
      return run.code === 0 ? run.stdout : "";
    case "timeout":
      throw new ConversionError("limits", `Text recognition of a page took longer than the allowed ${countOf(Math.round(opts.timeoutMs / 1000), "second")}.`);
    case "stalled":
      throw stalledFailure("Text recognition (Tesseract)", run.why, run.usage);
    case "too-long":
      throw new ConversionError("limits", "Text recognition produced more output than a page can hold.");
    case "not-started":
      throw new ConversionError("internal", "Tesseract (tesseract-ocr) could not be started.", { cause: run.error });
    case "killed":
      throw new ConversionError("internal", `Tesseract stopped unexpectedly (${run.signal}).`, { transient: true });
  }
}

/** A recognised word: its box in pixels of the image tesseract read, and its confidence 0..100. */
export interface TsvWord {
  text: string;
  left: number;
  top: number;
  width: number;
  height: number;
  conf: number;
  /** block, paragraph and line numbers joined: words sharing it are one line. */
  line: string;
}

export interface TsvPage {
  width: number;
  height: number;
  words: TsvWord[];
}

/** Reads tesseract's TSV (level, page, block, par, line, word, left, top, width, height, conf, text). */
export function parseTsv(tsv: string): TsvPage {
  const page: TsvPage = { width: 0, height: 0, words: [] };
  for (const row of tsv.split("\n")) {
    const f = row.split("\t");
    if (f.length < 12) continue;
    const level = Number(f[0]);
    const [left, top, width, height, conf] = f.slice(6, 11).map(Number) as [number, number, number, number, number];
    if (level === 1 && page.width === 0) {
      page.width = width;
      page.height = height;
    } else if (level === 5) {
      const text = xmlSafe(f.slice(11).join("\t")).replace(/\s+/g, " ").trim();
      if (!text || ![left, top, width, height, conf].every(Number.isFinite)) continue;
      page.words.push({ text, left, top, width, height, conf, line: `${f[2]}.${f[3]}.${f[4]}` });
    }
  }
  return page;
}

/**
 * Words and text in the shape of `PageText`: boxes as fractions of the image, text lines by "\n".
 * Every word tesseract gives is kept, as in its own text output: dropping unsure signs without
 * letters (specks, rules) gained 10 characters on the mixed PDF's chart pages but cost the FAA
 * circular its bullets, which tesseract reads as an unsure "¢" (bench/ocr.ts).
 */
export function tsvToWords(page: TsvPage): { text: string; words: Word[] } {
  const words: Word[] = [];
  const lines: string[] = [];
  let lineKey = "";
  let line: string[] = [];
  if (!(page.width > 0 && page.height > 0)) return { text: "", words };
  const frac = (v: number, of: number) => Math.round(Math.min(1, Math.max(0, v / of)) * 1e5) / 1e5;
  for (const w of page.words) {
    if (w.line !== lineKey) {
      if (line.length) lines.push(line.join(" "));
      line = [];
      lineKey = w.line;
    }
    const x = frac(w.left, page.width);
    const y = frac(w.top, page.height);
    words.push({
      text: w.text,
      x,
      y,
      w: Math.max(0, Math.round((frac(w.left + w.width, page.width) - x) * 1e5) / 1e5),
      h: Math.max(0, Math.round((frac(w.top + w.height, page.height) - y) * 1e5) / 1e5),
    });
    line.push(w.text);
  }
  if (line.length) lines.push(line.join(" "));
  return { text: lines.join("\n"), words };
}

export interface Orientation {
  /** Degrees to turn the image clockwise to make it upright: 0, 90, 180 or 270. */
  rotate: number;
  confidence: number;
}

/** Reads `tesseract --psm 0` output; undefined when it found no orientation (too little text). */
export function parseOsd(out: string): Orientation | undefined {
  const rotate = /^Rotate:\s*(\d+)/m.exec(out);
  const conf = /^Orientation confidence:\s*([0-9.]+)/m.exec(out);
  if (!rotate || !conf) return undefined;
  const r = Number(rotate[1]);
  return [0, 90, 180, 270].includes(r) ? { rotate: r, confidence: Number(conf[1]) } : undefined;
}

let installed: Promise<ReadonlySet<string>> | undefined;

/** The traineddata tesseract has (`--list-langs`), asked once per process (in the first caller's sandbox). */
export function installedLanguages(sandbox: SandboxSettings): Promise<ReadonlySet<string>> {
  installed ??= runTesseract(undefined, ["--list-langs"], { timeoutMs: 30_000, sandbox }).then(
    (out) => new Set(out.split("\n").slice(1).map((l) => l.trim()).filter((l) => /^[a-z_]+$/i.test(l))),
    (e: unknown) => {
      installed = undefined;
      throw e;
    },
  );
  return installed;
}
