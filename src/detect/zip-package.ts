import yauzl from "yauzl";
import type { Entry, ZipFile } from "yauzl";
import type { OrgDocType } from "../domain/formats.ts";
import { odfMediaType, readManifest } from "./odf.ts";
import { CONTENT_TYPES_PART, mainPartName, ooxmlType, PACKAGE_RELS_PART } from "./ooxml.ts";

/**
 * Classifies a zip package: OpenDocument / OpenOffice.org 1.x by their declared media type, Office
 * Open XML by the content type of their main part. Reads the central directory and at most four
 * small entries (`mimetype`, `META-INF/manifest.xml`, `[Content_Types].xml`, `_rels/.rels`), each
 * capped; a plain zip of other files is nothing.
 */

export interface PackageDetection {
  type: OrgDocType;
  encrypted: boolean;
}

const MIMETYPE = "mimetype";
const MANIFEST = "META-INF/manifest.xml";
const WANTED = new Set([MIMETYPE, MANIFEST, CONTENT_TYPES_PART, PACKAGE_RELS_PART]);

const MIMETYPE_CAP = 256;
/** Real manifests and content-type lists are a few KiB; a part that inflates beyond this is a bomb. */
const XML_CAP = 1024 * 1024;
/** A document has tens to a few thousand entries; scanning millions of forged ones would only burn time. */
const MAX_ENTRIES = 20_000;

/** Resolves to null on anything yauzl rejects; never rejects. */
export async function detectZipPackage(path: string): Promise<PackageDetection | null> {
  const zip = await openZip(path);
  if (!zip) return null;
  try {
    const listing = await listEntries(zip);
    if (!listing) return null;
    return await classify(zip, listing);
  } catch {
    return null;
  } finally {
    zip.close();
  }
}

interface Listing {
  wanted: Map<string, Entry>;
  /** Every entry name, lower-cased (OPC part names compare case-insensitively). */
  names: Set<string>;
}

async function classify(zip: ZipFile, { wanted, names }: Listing): Promise<PackageDetection | null> {
  const read = async (name: string, cap: number): Promise<string | null> => {
    const entry = wanted.get(name);
    return entry ? readEntry(zip, entry, cap) : null;
  };
  const mimetypeEntry = wanted.get(MIMETYPE);
  const manifestEntry = wanted.get(MANIFEST);
  if (mimetypeEntry || manifestEntry) {
    const manifestXml = await read(MANIFEST, XML_CAP);
    const manifest = manifestXml === null ? { type: null, encrypted: false } : readManifest(manifestXml);
    // A `mimetype` entry is authoritative, whatever the manifest says; one that cannot be read is a broken package.
    let type = manifest.type;
    if (mimetypeEntry) {
      const mimetype = await read(MIMETYPE, MIMETYPE_CAP);
      type = mimetype === null ? null : odfMediaType(mimetype);
    }
    return type === null ? null : { type, encrypted: manifest.encrypted };
  }
  const relsXml = await read(PACKAGE_RELS_PART, XML_CAP);
  const main = relsXml === null ? null : mainPartName(relsXml);
  // A content-types list naming a main part the package does not hold is a forgery, not a document.
  if (main === null || !names.has(main.toLowerCase())) return null;
  const contentTypes = await read(CONTENT_TYPES_PART, XML_CAP);
  const type = contentTypes === null ? null : ooxmlType(contentTypes, main);
  return type === null ? null : { type, encrypted: false };
}

function openZip(path: string): Promise<ZipFile | null> {
  return new Promise((resolve) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (err, zipfile) => resolve(err || !zipfile ? null : zipfile));
  });
}

/** Walks the central directory once; null if it is malformed or has more entries than any document. */
function listEntries(zip: ZipFile): Promise<Listing | null> {
  // yauzl emits exactly the end record's entry count: a forged million is refused before the walk.
  if (zip.entryCount > MAX_ENTRIES) return Promise.resolve(null);
  return new Promise((resolve) => {
    const wanted = new Map<string, Entry>();
    const names = new Set<string>();
    let settled = false;
    const finish = (result: Listing | null): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    // Stays attached after finish(): a late error without a listener would crash the process.
    zip.on("error", () => finish(null));
    zip.on("end", () => finish({ wanted, names }));
    zip.on("entry", (entry: Entry) => {
      if (settled) return;
      names.add(entry.fileName.toLowerCase());
      if (WANTED.has(entry.fileName) && !wanted.has(entry.fileName)) wanted.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.readEntry();
  });
}

/** Reads an entry as UTF-8, or null if it inflates beyond `cap` bytes (zip bomb) or is unreadable. */
function readEntry(zipfile: ZipFile, entry: Entry, cap: number): Promise<string | null> {
  if (entry.uncompressedSize > cap) return Promise.resolve(null);
  return new Promise((resolve) => {
    zipfile.openReadStream(entry, (err, stream) => {
      if (err || !stream) return resolve(null);
      const chunks: Buffer[] = [];
      let total = 0;
      stream.on("error", () => resolve(null));
      stream.on("data", (chunk: Buffer) => {
        total += chunk.length;
        // The declared size may lie; count what actually comes out of the inflater.
        if (total > cap) {
          stream.destroy();
          resolve(null);
          return;
        }
        chunks.push(chunk);
      });
      stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
  });
}
