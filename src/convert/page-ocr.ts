/**
 * The page step's text: pages whose text layer is empty, negligible or garbage are read by
 * Tesseract; the others keep the text poppler extracted (born-digital pages are never OCR'd), as do
 * pages whose text ran past the text bounds (their layer is there; we chose to keep less of it).
 */
import type { PageSize } from "./pdf-inspect.ts";
import { ocrPdfPages, unturnWords } from "./ocr.ts";
import { ocrLanguages } from "../domain/ocr-languages.ts";
import { needsOcr, textLayerVerdict } from "./ocr-needed.ts";
import { installedLanguages } from "./ocr-tesseract.ts";
import type { SandboxSettings } from "./sandbox.ts";
import type { PageText } from "./pdf-text.ts";

export interface OcrSettings {
  /** Tesseract languages for documents without a `language` (QUIRE_OCR_LANGUAGES). */
  languages: readonly string[];
  /** Pages read at once (QUIRE_OCR_CONCURRENCY). */
  concurrency: number;
}

export interface RecognizeOptions extends OcrSettings {
  /** Every page's displayed size, as the PDF's inspection gave them. */
  sizes: readonly PageSize[];
  /**
   * The PDF was made here from the document's own content (LibreOffice, the text layout): its text
   * layer is the document's text, never a scanner's garbage, so only empty or negligible pages
   * (pictures) are read; the garbage rule is for text layers of uploaded PDFs.
   */
  textLayerIsOurs: boolean;
  /** The document's ISO 639-1 `language`, or "" when unset. */
  documentLanguage: string;
  /** Wall-clock limit of one tesseract run; the job's own limit aborts `signal`. */
  timeoutMs: number;
  /** Where tesseract and poppler run (the worker's settings, sandbox.ts). */
  sandbox: SandboxSettings;
  signal: AbortSignal;
  tmpDir: string;
}

/** `extracted` with the text of every page that has none worth keeping replaced by what OCR reads. */
export async function recognizePages(pdf: string, extracted: PageText[], opts: RecognizeOptions): Promise<PageText[]> {
  const unread = (p: PageText) => !p.clipped && (opts.textLayerIsOurs ? ["empty", "negligible"].includes(textLayerVerdict(p)) : needsOcr(p));
  const wanted = extracted.filter(unread).map((p) => p.page);
  if (wanted.length === 0) return extracted.map(stored);
  const languages = ocrLanguages(opts.documentLanguage || undefined, opts.languages, await installedLanguages(opts.sandbox));
  const read = await ocrPdfPages(
    pdf,
    wanted.map((page) => ({ page, size: opts.sizes[page - 1]! })),
    { languages, timeoutMs: opts.timeoutMs, sandbox: opts.sandbox, concurrency: opts.concurrency, signal: opts.signal, tmpDir: opts.tmpDir },
  );
  const byPage = new Map(read.map((r) => [r.page, r]));
  return extracted.map((p) => {
    const r = byPage.get(p.page);
    // The words' boxes are placed on the page as it is shown, however Tesseract had to turn it to read it.
    return r && r.text.trim() !== "" ? { page: p.page, text: r.text, words: unturnWords(r.words, r.rotation) } : stored(p);
  });
}

/** A page as it is stored and served: without the extraction's own marks. */
const stored = ({ page, text, words }: PageText): PageText => ({ page, text, words });
