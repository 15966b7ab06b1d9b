import { open } from "node:fs/promises";
import type { OrgDocType } from "../domain/formats.ts";
import { detectOdf } from "./detect-odf.ts";
import { detectOle, OLE_MAGIC } from "./detect-ole.ts";

/** Acrobat accepts a header anywhere in the first KiB, and real files do carry junk before it. */
const PDF_WINDOW = 1024;
const PDF_MAGIC = Buffer.from("%PDF-", "latin1");
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const WPC_MAGIC = Buffer.from([0xff, 0x57, 0x50, 0x43]);
const WPC_DOCUMENT = 0x0a;
const RTF_MAGIC = Buffer.from("{\\rtf", "latin1");
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Detects which of the nine accepted formats a file is, from its content only (names lie).
 * Returns null for anything else, including empty, truncated or malformed files.
 * Reads at most a few sectors/entries, never the whole file. Rejects only if the file cannot be opened.
 */
export async function detectFormat(path: string): Promise<OrgDocType | null> {
  const handle = await open(path, "r");
  let closed = false;
  try {
    const size = (await handle.stat()).size;
    if (size === 0) return null;
    const want = Math.min(size, PDF_WINDOW);
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(want), 0, want, 0);
    const head = buffer.subarray(0, bytesRead);

    // Container magics decide first: a zip or compound file that stores a PDF uncompressed near
    // its start would otherwise be mistaken for a PDF by the 1 KiB scan.
    if (startsWith(head, OLE_MAGIC)) return await detectOle(handle, size);
    if (startsWith(head, ZIP_MAGIC)) {
      // yauzl opens the path itself; release our fd first so a large upload never holds two.
      closed = true;
      await handle.close();
      return await detectOdf(path);
    }
    return detectFromHead(head);
  } catch {
    return null;
  } finally {
    if (!closed) await handle.close().catch(() => undefined);
  }
}

function detectFromHead(head: Buffer): OrgDocType | null {
  if (startsWith(head, WPC_MAGIC)) {
    // Offset 9 is the WordPerfect file type; other WPC files are graphics, macros, printer drivers...
    return head[9] === WPC_DOCUMENT ? "wpd" : null;
  }
  // Word for Windows 1.x/2.x predate OLE: their FIB magic (wIdent) is the first word of the file.
  if (head[1] === 0xa5 && (head[0] === 0xdb || head[0] === 0x9b)) return "doc";
  if (isRtf(head)) return "rtf";
  if (head.indexOf(PDF_MAGIC) !== -1) return "pdf";
  return null;
}

function isRtf(head: Buffer): boolean {
  let i = startsWith(head, UTF8_BOM) ? UTF8_BOM.length : 0;
  while (i < head.length && isAsciiSpace(head[i] ?? 0)) i++;
  return startsWith(head.subarray(i), RTF_MAGIC);
}

function isAsciiSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0x0c;
}

function startsWith(buf: Buffer, magic: Buffer): boolean {
  return buf.length >= magic.length && buf.subarray(0, magic.length).equals(magic);
}
