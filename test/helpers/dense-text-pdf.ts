import { writeFile } from "node:fs/promises";
import { deflateSync } from "node:zlib";

/**
 * A small PDF whose extracted text is huge: every page shows one shared content stream that writes
 * the same line of words, line under line, as invisible text (render mode 3, as OCR layers are:
 * nothing to paint, so rendering stays quick). The stream is the same bytes over and over and
 * deflates to almost nothing, and all pages share it: tens of kilobytes of PDF for tens of
 * megabytes of text, as in issue 11 (about 48 000 characters a page at the default size).
 */
export async function writeDenseTextPdf(path: string, opts: { pages: number; size?: number }): Promise<{ bytes: number; textChars: number }> {
  // Square pages of `size` points. Poppler keeps at most 50 000 characters smaller than 3 points a
  // page, so the type is 4 points; Helvetica averages about half an em: a line holds size/2 characters.
  // Larger pages make poppler's layout slow and lossy: many ordinary pages it is.
  const size = opts.size ?? 800;
  const lines = Math.floor(size / 5) - 2;
  const unit = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ";
  const line = unit.repeat(Math.floor((size - 40) / 2 / unit.length)).trim();
  const stream = `BT 3 Tr /F1 4 Tf 5 TL 2 ${size - 8} Td\n${`(${line}) Tj T*\n`.repeat(lines)}ET\n`;
  const content = deflateSync(Buffer.from(stream, "latin1"), { level: 9 });

  const objects: Buffer[] = [];
  const add = (body: string | Buffer) => objects.push(typeof body === "string" ? Buffer.from(body, "latin1") : body);
  const pageIds = Array.from({ length: opts.pages }, (_, i) => 5 + i);
  add("<< /Type /Catalog /Pages 2 0 R >>");
  add(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${opts.pages} >>`);
  add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  add(Buffer.concat([Buffer.from(`<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`), content, Buffer.from("\nendstream")]));
  for (let i = 0; i < opts.pages; i++) {
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${size} ${size}] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>`);
  }

  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n%\xE2\xE3\xCF\xD3\n", "latin1")];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from("\nendobj\n")]);
    offsets.push(offset);
    parts.push(obj);
    offset += obj.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`)].join("");
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  const pdf = Buffer.concat(parts);
  await writeFile(path, pdf);
  return { bytes: pdf.length, textChars: opts.pages * lines * (line.length + 1) };
}
