/**
 * A PDF of `pages` small pages, each saying "Page <n>" (Helvetica, real text layer): cheap to render,
 * so tests of page-range jobs can use dozens of pages. `hugePage` makes that page far too large to
 * render (a strip 10 points wide and 14,400 tall: billions of pixels at the reading width).
 */
export function numberedPagesPdf(pages: number, opts: { hugePage?: number } = {}): Buffer {
  const objs: string[] = [];
  objs[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objs[2] = `<< /Type /Pages /Count ${pages} /Kids [${Array.from({ length: pages }, (_, i) => `${4 + 2 * i} 0 R`).join(" ")}] >>`;
  objs[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
  for (let i = 0; i < pages; i++) {
    const n = i + 1;
    const box = n === opts.hugePage ? "0 0 10 14400" : "0 0 200 280";
    const content = `BT /F1 18 Tf 30 200 Td (Page ${n}) Tj 0 -30 Td (of the book) Tj ET`;
    objs[4 + 2 * i] = `<< /Type /Page /Parent 2 0 R /MediaBox [${box}] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
    objs[5 + 2 * i] = `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;
  }
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let i = 1; i < objs.length; i++) {
    offsets[i] = out.length;
    out += `${i} 0 obj\n${objs[i]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objs.length}\n0000000000 65535 f \n`;
  for (let i = 1; i < objs.length; i++) out += `${String(offsets[i]).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
