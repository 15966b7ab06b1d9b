import { crc32, createDeflateRaw } from "node:zlib";
import sharp from "sharp";
import { zipOf } from "./zip-writer.ts";

/** Generated hostile inputs for test/system/hostile-files.test.ts; each is built in memory, in a second or less. */

/** A zip with these entries (name, data or already-deflated data with its crc and size). */
function zip(entries: Array<{ name: string; stored: Buffer } | { name: string; deflated: Buffer; crc: number; size: number }>): Buffer {
  return zipOf(
    entries.map((e) =>
      "stored" in e
        ? { name: e.name, method: 0, body: e.stored, crc: crc32(e.stored), size: e.stored.length }
        : { name: e.name, method: 8, body: e.deflated, crc: e.crc, size: e.size },
    ),
  );
}

const ODT_MIMETYPE = "application/vnd.oasis.opendocument.text";
const MANIFEST = `<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">
 <manifest:file-entry manifest:full-path="/" manifest:media-type="${ODT_MIMETYPE}"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
</manifest:manifest>`;
const CONTENT_HEAD =
  '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body><office:text>';
const CONTENT_TAIL = "</office:text></office:body></office:document-content>";

async function deflate(parts: Iterable<Buffer>): Promise<{ deflated: Buffer; crc: number; size: number }> {
  const d = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  d.on("data", (c: Buffer) => out.push(c));
  const done = new Promise((resolve, reject) => d.on("end", resolve).on("error", reject));
  let crc = 0;
  let size = 0;
  for (const p of parts) {
    crc = crc32(p, crc);
    size += p.length;
    if (!d.write(p)) await new Promise((r) => d.once("drain", r));
  }
  d.end();
  await done;
  return { deflated: Buffer.concat(out), crc, size };
}

/** An .odt whose content.xml inflates from a few hundred KiB to `inflatedMiB` MiB of one paragraph. */
export async function zipBombOdt(inflatedMiB: number): Promise<Buffer> {
  const mib = Buffer.alloc(1024 * 1024, "A");
  function* content() {
    yield Buffer.from(`${CONTENT_HEAD}<text:p>`);
    for (let i = 0; i < inflatedMiB; i++) yield mib;
    yield Buffer.from(`</text:p>${CONTENT_TAIL}`);
  }
  return zip([
    { name: "mimetype", stored: Buffer.from(ODT_MIMETYPE) },
    { name: "META-INF/manifest.xml", stored: Buffer.from(MANIFEST) },
    { name: "content.xml", ...(await deflate(content())) },
  ]);
}

/** An .odt whose paragraphs nest `depth` sections deep. */
export async function deeplyNestedOdt(depth: number): Promise<Buffer> {
  const body = `${"<text:section>".repeat(depth)}<text:p>deep</text:p>${"</text:section>".repeat(depth)}`;
  return zip([
    { name: "mimetype", stored: Buffer.from(ODT_MIMETYPE) },
    { name: "META-INF/manifest.xml", stored: Buffer.from(MANIFEST) },
    { name: "content.xml", ...(await deflate([Buffer.from(CONTENT_HEAD + body + CONTENT_TAIL)])) },
  ]);
}

/** A PDF built from object bodies (1-based numbering, object 1 the catalog), with a correct xref table. */
function pdf(objects: string[]): Buffer {
  const chunks: string[] = ["%PDF-1.4\n"];
  const offsets: number[] = [];
  let at = chunks[0]!.length;
  objects.forEach((body, i) => {
    offsets.push(at);
    const text = `${i + 1} 0 obj\n${body}\nendobj\n`;
    chunks.push(text);
    at += Buffer.byteLength(text);
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`)].join("");
  chunks.push(xref, `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`);
  return Buffer.from(chunks.join(""));
}

/** One page of `width` × `height` points (Acrobat stops at 14,400; poppler takes more). */
export function hugePagePdf(width: number, height: number): Buffer {
  return pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] >>`,
  ]);
}

/** `count` tiny objects: page objects under one page tree, each with its own tiny content stream. */
export function manyObjectsPdf(count: number): Buffer {
  const pages = Math.floor((count - 2) / 2);
  const objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""];
  const kids: string[] = [];
  for (let i = 0; i < pages; i++) {
    const page = objects.length + 1;
    kids.push(`${page} 0 R`);
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Contents ${page + 1} 0 R >>`, "<< /Length 1 >>\nstream\nn\nendstream");
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(" ")}] /Count ${pages} >>`;
  return pdf(objects);
}

/** One page whose resources hold an array nested `depth` deep. */
export function deeplyNestedPdf(depth: number): Buffer {
  return pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Nested ${"[".repeat(depth)}${"]".repeat(depth)} >>`,
  ]);
}

/** RTF groups nested `depth` deep. */
export function deeplyNestedRtf(depth: number): Buffer {
  return Buffer.from(`{\\rtf1\\ansi ${"{".repeat(depth)}deep${"}".repeat(depth)}}`);
}

/**
 * A multi-page TIFF of `frames` blank `side` × `side` frames, 1-bit and CCITT G4-compressed, so a
 * few hundred megapixels weigh a few tens of KB (issue 23 item 5: ten 7000 × 7000 frames, 477 KB,
 * held a conversion slot 239 s).
 */
export async function blankFramesTiff(frames: number, side: number): Promise<Buffer> {
  return sharp({ create: { width: side, height: side * frames, channels: 3, background: "#ffffff", pageHeight: side }, limitInputPixels: false })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1 })
    .toBuffer();
}
