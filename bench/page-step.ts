/**
 * The pipeline's page step on its own, for bench/convert.ts to run in a child process whose whole
 * process tree's CPU time bench/tree-cpu.py measures:
 * `tsx bench/page-step.ts PDF OUT_DIR PROCESSES` renders every page at the reading size, then the covers
 * from page 1, as src/jobs/convert-document.ts does. `tsx bench/page-step.ts --noop` only starts
 * and loads the same modules: the cost of starting, which the benchmark subtracts.
 */
import { join } from "node:path";
import { renderCovers, renderPages, type PdfLimits } from "../src/convert/pdf-pages.ts";
import { PAGE_WIDTHS } from "../src/domain/page-images.ts";
import { DEFAULT_SANDBOX } from "../src/convert/sandbox.ts";

export const STEP_LIMITS: PdfLimits = { maxPages: 2000, maxPagePixels: 50e6, timeoutMs: 120_000, sandbox: DEFAULT_SANDBOX };

const [pdf, out, processes] = process.argv.slice(2);
if (pdf !== "--noop") {
  if (!pdf || !out || !processes) throw new Error("usage: page-step.ts PDF OUT_DIR PROCESSES | --noop");
  // As the worker does: the reading size only (thumbnails are variants made on request).
  const made = await renderPages(pdf, join(out, "pages"), { widths: { read: PAGE_WIDTHS.read }, limits: STEP_LIMITS, processes: Number(processes) });
  await renderCovers(pdf, join(out, "covers"), STEP_LIMITS, made.find((p) => p.page === 1 && p.size === "read"));
}
