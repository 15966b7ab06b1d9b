import type { OrgDocType } from "../domain/formats.ts";

/**
 * OpenDocument and OpenOffice.org 1.x packages, by their declared media type (the `mimetype` entry,
 * else the manifest's root entry), and flat (single XML file) OpenDocument by its `office:mimetype`.
 * Templates count as their document type: LibreOffice opens an .ott as a text document.
 */

const MEDIA_TYPES = new Map<string, OrgDocType>([
  ["application/vnd.oasis.opendocument.text", "odt"],
  ["application/vnd.oasis.opendocument.text-template", "odt"],
  ["application/vnd.oasis.opendocument.presentation", "odp"],
  ["application/vnd.oasis.opendocument.presentation-template", "odp"],
  ["application/vnd.oasis.opendocument.spreadsheet", "ods"],
  ["application/vnd.oasis.opendocument.spreadsheet-template", "ods"],
  ["application/vnd.oasis.opendocument.graphics", "odg"],
  ["application/vnd.oasis.opendocument.graphics-template", "odg"],
  ["application/vnd.sun.xml.writer", "sxw"],
  ["application/vnd.sun.xml.writer.template", "sxw"],
  ["application/vnd.sun.xml.impress", "sxi"],
  ["application/vnd.sun.xml.impress.template", "sxi"],
]);

export function odfMediaType(mediaType: string): OrgDocType | null {
  return MEDIA_TYPES.get(mediaType.trim()) ?? null;
}

export interface ManifestFacts {
  /** The root entry's media type mapped to a type (OpenOffice.org 1.0 has no `mimetype` entry). */
  type: OrgDocType | null;
  /** Some entry carries `encryption-data`: the package is password-protected. */
  encrypted: boolean;
}

export function readManifest(xml: string): ManifestFacts {
  let type: OrgDocType | null = null;
  for (const match of xml.matchAll(/<(?:[\w.-]+:)?file-entry\b([^>]*)>/g)) {
    const attrs = parseAttributes(match[1] ?? "");
    if (attrs.get("full-path") === "/") {
      type = odfMediaType(attrs.get("media-type") ?? "");
      break;
    }
  }
  return { type, encrypted: /<(?:[\w.-]+:)?encryption-data\b/.test(xml) };
}

/**
 * A flat OpenDocument file (.fodt, .fods...) is one XML document whose root `office:document`
 * names its type. Only the first 4 KiB are looked at: the root element comes right after the prolog.
 */
export function flatOdfType(head: string): OrgDocType | null {
  const root = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<office:document\b([^>]*)>/.exec(head.slice(0, 4096));
  if (!root) return null;
  return odfMediaType(parseAttributes(root[1] ?? "").get("mimetype") ?? "");
}

/** Attributes by local name (the namespace prefix is dropped). */
export function parseAttributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of text.matchAll(/(?:[\w.-]+:)?([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    if (m[1] !== undefined) attrs.set(m[1], m[2] ?? m[3] ?? "");
  }
  return attrs;
}
