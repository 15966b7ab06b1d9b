import { randomUUID } from "node:crypto";
import { open, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { decode, detectText } from "../detect/text.ts";
import { ConversionError } from "./conversion-error.ts";
import type { ImportFilter, OfficeConverter } from "./office-to-pdf.ts";

/**
 * A plain-text document as a PDF: the text is decoded in the encoding detection found (UTF-8,
 * UTF-16 with a BOM, Windows-1252), cleaned of control characters, written as UTF-8 with a BOM,
 * and laid out as pages by LibreOffice Writer's plain-text importer on the warm office slots. Writer brings what a
 * hand-made layout would lack: line wrapping, font fallback for any script (CJK, Arabic, Cyrillic),
 * right-to-left shaping, and a real text layer for search and selection. LibreOffice left to guess
 * alone reads a BOM-less Latin-1 file as UTF-8 and garbles every accent; the BOM settles it.
 */

export interface TextToPdfOptions {
  /** Texts longer than this many bytes fail with code 5 (their page count would be far beyond any limit anyway). */
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * Writer's plain-text importer, forced: left to its type detection LibreOffice reads a "text" that
 * holds HTML as a web page, SVG as a drawing and WordML as a Word document. The options are the
 * encoding of the file we write (UTF-8, whatever the upload's was: it is decoded above), LF line
 * ends, and the default font and language.
 */
const PLAIN_TEXT: ImportFilter = { name: "Text (encoded)", options: "UTF8,LF,,," };

/** Enough to tell the encoding, as at upload (src/detect/text.ts). */
const SAMPLE_BYTES = 64 * 1024;

export async function textToPdf(
  input: string,
  output: string,
  office: Pick<OfficeConverter, "convert">,
  opts: TextToPdfOptions,
): Promise<void> {
  const size = (await stat(input)).size;
  if (size > opts.maxBytes) throw new ConversionError("limits", "The text is too long to be published as one document.");
  const bytes = await readAll(input, size);
  const found = detectText(bytes.subarray(0, SAMPLE_BYTES), bytes.length <= SAMPLE_BYTES);
  if (!found) throw new ConversionError("format", "The file is not plain text.");
  // Past the sample a stray invalid byte becomes U+FFFD rather than failing the whole document.
  const text = decode(bytes.subarray(found.bomLength), found.encoding) ?? new TextDecoder(found.encoding).decode(bytes.subarray(found.bomLength));
  const prepared = join(dirname(output), `text-${randomUUID()}.txt`);
  try {
    await writeFile(prepared, `\uFEFF${clean(text)}`, "utf8");
    await office.convert(prepared, output, opts.signal, PLAIN_TEXT);
  } finally {
    await rm(prepared, { force: true });
  }
}

/**
 * Line ends become LF; a form feed (a page break in many plain-text conventions) becomes an empty
 * line; other control characters, which would show as boxes or be refused by the importer, go.
 */
export function clean(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/\f/g, "\n\n")
    .replace(/[^\P{Cc}\t\n]|[\uFFFE\uFFFF]/gu, "");
}

async function readAll(path: string, size: number): Promise<Buffer> {
  const file = await open(path, "r");
  try {
    const buf = Buffer.alloc(size);
    const { bytesRead } = await file.read(buf, 0, size, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}
