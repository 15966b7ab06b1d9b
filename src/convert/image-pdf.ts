import { open } from "node:fs/promises";

/**
 * Writes a PDF whose every page is one image filling the page. This is all of PDF that image
 * documents need, so the rest of the pipeline (page rendering, covers, text and OCR) treats them
 * as any PDF; no PDF library is among our dependencies, and this subset (PDF 1.4, one image
 * XObject per page, a classic xref table) is small and fixed.
 */

export interface PdfImagePage {
  /** Page size in points (1/72 in). */
  widthPt: number;
  heightPt: number;
  image: {
    width: number;
    height: number;
    colorSpace: "DeviceGray" | "DeviceRGB";
    /** DCTDecode: `data` is a baseline JPEG; FlateDecode: zlib-compressed 8-bit samples. */
    filter: "DCTDecode" | "FlateDecode";
    data: Buffer;
  };
}

/** Streams the pages to `path` one at a time, so only one page's image is held by the caller. */
export async function writeImagePdf(path: string, pages: AsyncIterable<PdfImagePage>): Promise<number> {
  const file = await open(path, "w");
  const offsets: number[] = [];
  let position = 0;
  const write = async (chunk: Buffer | string): Promise<void> => {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk;
    await file.write(buf);
    position += buf.length;
  };
  /** Object numbers: 1 catalog, 2 page tree, then three per page (page, content, image). */
  const object = async (id: number, body: string | Buffer[]): Promise<void> => {
    offsets[id] = position;
    await write(`${id} 0 obj\n`);
    if (typeof body === "string") await write(body);
    else for (const part of body) await write(part);
    await write("\nendobj\n");
  };
  try {
    // The binary comment tells transfer tools the file is binary (PDF 1.4, 7.5.2).
    await write("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n");
    let count = 0;
    for await (const page of pages) {
      const id = 3 + count * 3;
      const w = format(page.widthPt);
      const h = format(page.heightPt);
      await object(id, `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /XObject << /Im0 ${id + 2} 0 R >> >> /Contents ${id + 1} 0 R >>`);
      const content = `q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q`;
      await object(id + 1, `<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
      const { image } = page;
      // /Interpolate: poppler enlarges an image four times or more without smoothing unless asked
      // (a 100 px photo at the 1200 px reading size was blocks of 12 px); smaller scales, and every
      // reduction, it draws the same either way.
      await object(id + 2, [
        Buffer.from(
          `<< /Type /XObject /Subtype /Image /Width ${image.width} /Height ${image.height} /ColorSpace /${image.colorSpace} ` +
            `/BitsPerComponent 8 /Interpolate true /Filter /${image.filter} /Length ${image.data.length} >>\nstream\n`,
          "latin1",
        ),
        image.data,
        Buffer.from("\nendstream", "latin1"),
      ]);
      count++;
    }
    if (count === 0) throw new Error("a PDF needs at least one page");
    const kids = Array.from({ length: count }, (_, i) => `${3 + i * 3} 0 R`).join(" ");
    await object(2, `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`);
    await object(1, "<< /Type /Catalog /Pages 2 0 R >>");
    const xref = position;
    const size = 3 + count * 3;
    let table = `xref\n0 ${size}\n0000000000 65535 f \n`;
    for (let id = 1; id < size; id++) table += `${String(offsets[id] ?? 0).padStart(10, "0")} 00000 n \n`;
    await write(`${table}trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
    return count;
  } finally {
    await file.close();
  }
}

function format(points: number): string {
  return (Math.round(points * 100) / 100).toString();
}
