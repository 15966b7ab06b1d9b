/**
 * Page count and page sizes of a PDF, and the runner for poppler's command-line programs that the
 * other pdf-* modules share. Poppler (GPL) runs as separate processes: that keeps our licence, and
 * lets a hung or runaway parse be killed without taking the service down with it.
 */
import { runSandboxed, type RunLimits } from "./sandboxed-run.ts";
import { stat } from "node:fs/promises";
import { resolve as absolute } from "node:path";
import { ConversionError, stalledFailure } from "./conversion-error.ts";
import { sandboxView, type SandboxSettings } from "./sandbox.ts";
import { countOf } from "../domain/counts.ts";

export interface PdfLimits {
  /** Documents with more pages are refused before anything is rendered (2000). */
  maxPages: number;
  /** Largest pixel area one page may have at the width it is rendered at (e.g. 50e6). */
  maxPagePixels: number;
  /** Wall-clock limit for each external command; a pdftoppm run over many pages has it for each page. */
  timeoutMs: number;
  /** Where poppler's programs run (the worker's settings, sandbox.ts). */
  sandbox: SandboxSettings;
}

/** Points, as displayed: after /Rotate, from the CropBox (what viewers show). */
export interface PageSize {
  width: number;
  height: number;
}

export interface PopplerRun {
  sandbox: SandboxSettings;
  /** The PDF: the only file of ours the program sees (read-only). */
  input?: string;
  /** A folder the program may write to, if it writes files. */
  outputDir?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Receives stdout as text as it arrives, so long outputs need not be held whole. */
  onStdout?: (chunk: string) => void;
  /** Sees stderr as it arrives; see RunLimits.onStderr in sandboxed-run.ts. */
  onStderr?: RunLimits["onStderr"];
}

/** Rendering a page at our largest size needs far less; a limit, not a budget. */
export const POPPLER_ADDRESS_SPACE_BYTES = 2 * 1024 ** 3;

/**
 * Runs one poppler program in its sandbox (sandbox.ts). `args` gets the function that names a path
 * as the program sees it (`opts.input`, or one inside `opts.outputDir`). Resolves with its stdout
 * (unless `onStdout` takes it) when it exits 0. A run that used `timeoutMs` of processor time is
 * killed and becomes "limits"; one held back by the machine (stopped, starved) is killed and
 * retried (sandboxed-run.ts); a non-zero exit is classified from stderr.
 */
export async function runPoppler(cmd: string, args: (at: (hostPath: string) => string) => string[], opts: PopplerRun): Promise<string> {
  // Bounded like LibreOffice: a hostile PDF makes poppler's allocations fail rather than the machine's.
  const view = sandboxView({
    readOnly: opts.input === undefined ? [] : [[opts.input, "/in/document.pdf"]],
    writable: opts.outputDir === undefined ? [] : [[opts.outputDir, "/out"]],
    addressSpaceBytes: POPPLER_ADDRESS_SPACE_BYTES,
  }, opts.sandbox);
  const run = await runSandboxed(view.command(cmd, args((p) => view.path(p))), opts);
  switch (run.kind) {
    case "exited":
      if (run.code === 0) return run.stdout;
      throw popplerFailure(cmd, run.code, run.stderr);
    case "timeout":
    case "too-long":
      throw new ConversionError("limits", `Processing the PDF took longer than the allowed ${countOf(Math.round(opts.timeoutMs / 1000), "second")}.`);
    case "stalled":
      throw stalledFailure(`The PDF tool ${cmd}`, run.why, run.usage);
    case "not-started": {
      const missing = run.error.code === "ENOENT";
      throw new ConversionError("internal", missing ? `The PDF tools (poppler-utils, ${cmd}) are not installed.` : `The PDF tool ${cmd} could not be started.`, { cause: run.error });
    }
    case "killed":
      // Killed by a signal we did not send: a crash (or the OOM killer), worth one more try.
      throw new ConversionError("internal", `The PDF tool ${cmd} stopped unexpectedly (${run.signal}).`, { transient: true });
  }
}

/** Turns a failed poppler run into the error kind the document should end with. */
export function popplerFailure(cmd: string, code: number, stderr: string): ConversionError {
  const cause = new Error(`${cmd} exited with ${code}: ${stderr.trim().slice(0, 2000)}`);
  // Its output could not be written ("Output file write error --- out of disk space?", pdftoppm's
  // "Could not write image"): the machine's disk, not the document (issue 23 item 0d).
  if (/write error|out of disk space|could not write|no space left/i.test(stderr)) {
    return new ConversionError("internal", "The server's disk is full; the conversion waits for space.", { machineFault: "disk-full", cause });
  }
  if (/incorrect password/i.test(stderr)) {
    return new ConversionError("encrypted", "The PDF is protected by a password, so it cannot be opened.", { cause });
  }
  return new ConversionError("corrupt", "The PDF file is damaged and could not be read.", { cause });
}

async function assertNonEmptyFile(pdfPath: string): Promise<void> {
  let size: number;
  try {
    size = (await stat(pdfPath)).size;
  } catch (e) {
    // The caller's own file went missing: not the uploader's fault.
    throw new ConversionError("internal", "The uploaded file could not be found for conversion.", { cause: e });
  }
  if (size === 0) throw new ConversionError("corrupt", "The PDF file is empty.");
}

export interface PdfInfo {
  pageCount: number;
  pages: PageSize[];
  /** Pages displayed a quarter turn from how they are stored (/Rotate 90 or 270): pdftoppm's
   *  -scale-to-x measures those before turning them, so the renderer has to know. */
  quarterTurned: boolean[];
}

/**
 * Page count and displayed size of every page. Throws "limits" past `maxPages` (without listing the
 * pages), "encrypted" when a user password is needed, "corrupt" when poppler cannot read the file.
 */
export async function inspectPdf(pdfPath: string, limits: PdfLimits, signal?: AbortSignal): Promise<PdfInfo> {
  // Absolute, so that a name starting with "-" can never be read as a poppler option.
  pdfPath = absolute(pdfPath);
  await assertNonEmptyFile(pdfPath);
  // pdfinfo clamps -l to the real page count, so one run both counts pages and sizes at most maxPages of them.
  const out = await runPoppler("pdfinfo", (at) => ["-f", "1", "-l", String(Math.max(1, limits.maxPages)), at(pdfPath)], { input: pdfPath, timeoutMs: limits.timeoutMs, signal, sandbox: limits.sandbox });
  const lines = out.split("\n");
  // Metadata (Title, Author…) is printed before "Pages:" and may contain anything, lines that look
  // like ours included: only what follows the last "Pages:" line is pdfinfo's own.
  let start = -1;
  let pageCount = NaN;
  lines.forEach((line, i) => {
    const m = /^Pages:\s+(\d+)\s*$/.exec(line);
    if (m) {
      start = i;
      pageCount = Number(m[1]);
    }
  });
  if (start < 0 || !(pageCount > 0)) throw new ConversionError("corrupt", "The PDF file has no readable pages.", { cause: new Error(out.slice(0, 2000)) });
  if (pageCount > limits.maxPages) {
    throw new ConversionError("limits", `The PDF has ${countOf(pageCount, "page")}; at most ${limits.maxPages} can be published.`);
  }
  const sizes: { w: number; h: number; rot: number }[] = [];
  for (const line of lines.slice(start + 1)) {
    let m = /^Page\s+(\d+)\s+size:\s+([0-9.]+) x ([0-9.]+) pts/.exec(line);
    if (m) {
      sizes[Number(m[1]) - 1] = { w: Number(m[2]), h: Number(m[3]), rot: 0 };
      continue;
    }
    m = /^Page\s+(\d+)\s+rot:\s+(-?\d+)/.exec(line);
    const entry = m ? sizes[Number(m[1]) - 1] : undefined;
    if (m && entry) entry.rot = Number(m[2]);
  }
  const pages: PageSize[] = [];
  const quarterTurned: boolean[] = [];
  for (let i = 0; i < pageCount; i++) {
    const s = sizes[i];
    if (!s || !(s.w > 0) || !(s.h > 0) || !Number.isFinite(s.w) || !Number.isFinite(s.h)) {
      throw new ConversionError("corrupt", `Page ${i + 1} of the PDF has no usable size.`);
    }
    const quarterTurn = (((s.rot % 360) + 360) % 360) % 180 === 90;
    pages.push(quarterTurn ? { width: s.h, height: s.w } : { width: s.w, height: s.h });
    quarterTurned.push(quarterTurn);
  }
  return { pageCount, pages, quarterTurned };
}

/** Pixel height of a page rendered `width` pixels wide (poppler rounds up). */
export function pixelHeight(page: PageSize, width: number): number {
  return Math.max(1, Math.ceil((width * page.height) / page.width));
}

/** Refuses, before any rendering, a page that would be larger than `maxPagePixels` at `width`. */
/** `firstPage` is the number of `pages[0]` in the document (a page range starts later), for the message. */
export function assertPixelLimit(pages: PageSize[], width: number, limits: PdfLimits, firstPage = 1): void {
  pages.forEach((p, i) => {
    const h = pixelHeight(p, width);
    if (width * h > limits.maxPagePixels) {
      throw new ConversionError(
        "limits",
        `Page ${firstPage + i} is too large to publish: ${width}×${h} pixels at the reading width, more than the ${limits.maxPagePixels.toLocaleString("en-US")} allowed.`,
      );
    }
  });
}
