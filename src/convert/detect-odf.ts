import yauzl from "yauzl";
import type { Entry, ZipFile } from "yauzl";
import type { OrgDocType } from "../domain/formats.ts";

/**
 * Classifies an OpenDocument / OpenOffice.org 1.x zip package by its declared media type.
 * Only the central directory and at most the `mimetype` or `META-INF/manifest.xml` entry are read.
 */

const MEDIA_TYPES = new Map<string, OrgDocType>([
  ["application/vnd.oasis.opendocument.text", "odt"],
  ["application/vnd.oasis.opendocument.presentation", "odp"],
  ["application/vnd.sun.xml.writer", "sxw"],
  ["application/vnd.sun.xml.impress", "sxi"],
]);

const MIMETYPE_CAP = 256;
const MANIFEST_CAP = 1024 * 1024;
/** A document has tens of entries; scanning millions of forged ones would only burn time. */
const MAX_ENTRIES = 10_000;

export function mediaTypeToDocType(mediaType: string): OrgDocType | null {
  return MEDIA_TYPES.get(mediaType.trim()) ?? null;
}

/** Resolves to null on anything yauzl rejects; never rejects. */
export function detectOdf(path: string): Promise<OrgDocType | null> {
  return new Promise((resolve) => {
    let settled = false;
    let zip: ZipFile | undefined;
    const finish = (result: OrgDocType | null): void => {
      if (settled) return;
      settled = true;
      // Stopping before the last entry means autoClose never fires, so release the fd here.
      zip?.close();
      resolve(result);
    };

    yauzl.open(path, { lazyEntries: true, autoClose: true }, (err, zipfile) => {
      if (err || !zipfile) return finish(null);
      zip = zipfile;
      let manifestType: OrgDocType | null = null;
      let seen = 0;
      const next = (): void => {
        if (++seen >= MAX_ENTRIES) return finish(null);
        zipfile.readEntry();
      };
      // Stays attached after finish(): a late error without a listener would crash the process.
      zipfile.on("error", () => finish(null));
      zipfile.on("end", () => finish(manifestType));
      zipfile.on("entry", (entry: Entry) => {
        if (settled) return;
        if (entry.fileName === "mimetype") {
          // A `mimetype` entry is authoritative, whatever the manifest says.
          readEntry(zipfile, entry, MIMETYPE_CAP).then(
            (text) => finish(text === null ? null : mediaTypeToDocType(text)),
            () => finish(null),
          );
        } else if (entry.fileName === "META-INF/manifest.xml") {
          // Read now rather than after the scan: autoClose releases the fd once the last entry is seen.
          readEntry(zipfile, entry, MANIFEST_CAP).then((xml) => {
            manifestType = xml === null ? null : rootMediaType(xml);
            next();
          }, () => finish(null));
        } else {
          next();
        }
      });
      zipfile.readEntry();
    });
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

/** The package's own media type is the `file-entry` whose full-path is "/" (OpenOffice.org 1.0 has no `mimetype`). */
export function rootMediaType(xml: string): OrgDocType | null {
  const tag = /<(?:[\w.-]+:)?file-entry\b([^>]*)>/g;
  for (const match of xml.matchAll(tag)) {
    const attrs = parseAttributes(match[1] ?? "");
    if (attrs.get("full-path") === "/") return mediaTypeToDocType(attrs.get("media-type") ?? "");
  }
  return null;
}

function parseAttributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of text.matchAll(/(?:[\w.-]+:)?([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    if (m[1] !== undefined) attrs.set(m[1], m[2] ?? m[3] ?? "");
  }
  return attrs;
}
