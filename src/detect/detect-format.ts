import { open } from "node:fs/promises";
import { extname } from "node:path";
import { docTypeFromExtension, type OrgDocType } from "../domain/formats.ts";
import { detectMagic, hasBinaryPrefix, OLE_MAGIC, startsWith, ZIP_MAGIC } from "./magic.ts";
import { flatOdfType } from "./odf.ts";
import { detectOle, type OleKind } from "./ole.ts";
import { detectText } from "./text.ts";
import { detectZipPackage } from "./zip-package.ts";

export interface Detection {
  type: OrgDocType;
  /**
   * The file says it is password-protected (an encrypted OOXML package, an ODF package with
   * encrypted entries). A hint, not a verdict: Office's "VelvetSweatshop" default password opens
   * without anyone typing it, so only the conversion can tell whether the file really is locked.
   */
  encrypted: boolean;
}

export interface DetectHints {
  /**
   * The uploaded file's name. Consulted for one thing only: which of docx/pptx/xlsx an encrypted
   * OOXML package is, since encryption hides every trace of that in the content.
   */
  fileName?: string;
}

/** Enough for every magic and for deciding whether a file is text; read in one go. */
const SAMPLE_BYTES = 64 * 1024;

/**
 * Detects which accepted format a file is, from its content only (names lie): a look at its first
 * bytes and, for compound files and zip packages, their directory and a few small entries. Never
 * reads the whole file and never runs a converter. Returns null for anything else, including
 * empty, truncated or malformed files. Rejects only if the file cannot be opened.
 */
export async function detectFile(path: string, hints: DetectHints = {}): Promise<Detection | null> {
  const handle = await open(path, "r");
  let closed = false;
  try {
    const size = (await handle.stat()).size;
    if (size === 0) return null;
    const want = Math.min(size, SAMPLE_BYTES);
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(want), 0, want, 0);
    const head = buffer.subarray(0, bytesRead);

    // Container magics decide first: a zip or compound file that stores a PDF uncompressed near
    // its start would otherwise be mistaken for a PDF by the 1 KiB scan.
    if (startsWith(head, OLE_MAGIC)) return fromOle(await detectOle(handle, size), hints);
    if (startsWith(head, ZIP_MAGIC)) {
      // yauzl opens the path itself; release our fd first so a large upload never holds two.
      closed = true;
      await handle.close();
      return await detectZipPackage(path);
    }
    const type = detectMagic(head, size);
    if (type) return { type, encrypted: false };
    const text = hasBinaryPrefix(head) ? null : detectText(head, bytesRead === size);
    if (!text) return null;
    // A flat OpenDocument file is XML text too, but LibreOffice opens it as the document it is.
    const flat = text.encoding === "utf-8" ? flatOdfType(head.subarray(text.bomLength, 4096).toString("utf8")) : null;
    return { type: flat ?? "txt", encrypted: false };
  } catch {
    return null;
  } finally {
    if (!closed) await handle.close().catch(() => undefined);
  }
}

/** The type alone, for callers that need nothing more. */
export async function detectFormat(path: string, hints: DetectHints = {}): Promise<OrgDocType | null> {
  return (await detectFile(path, hints))?.type ?? null;
}

const OOXML_TYPES: ReadonlySet<OrgDocType> = new Set(["docx", "pptx", "xlsx"]);

function fromOle(kind: OleKind | null, hints: DetectHints): Detection | null {
  if (kind === null) return null;
  if (kind !== "encrypted-ooxml") return { type: kind, encrypted: false };
  const named = hints.fileName ? docTypeFromExtension(extname(hints.fileName).slice(1)) : undefined;
  // Without a telling name, docx: the record needs a type, and the conversion fails (code 4) or decrypts anyway.
  return { type: named && OOXML_TYPES.has(named) ? named : "docx", encrypted: true };
}
