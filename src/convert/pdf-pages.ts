/**
 * PDF → page count and sizes, page images, covers, page text with word boxes, description.
 * The work is split by concern (see each module); this is the one import the pipeline needs.
 * All of it drives poppler-utils (pdfinfo, pdftoppm, pdftotext) as child processes and sharp for
 * image encoding; failures are `ConversionError`s with the kinds of decisions §6.
 */
export { inspectPdf, type PageSize, type PdfInfo, type PdfLimits } from "./pdf-inspect.ts";
export { COVER_WIDTHS, IMAGE_EXTENSION, IMAGE_MIME_TYPE, renderCovers, renderPages, type Covers, type RenderedPage } from "./pdf-render.ts";
export { extractText, summarize, xmlSafe, type PageText, type Word } from "./pdf-text.ts";
