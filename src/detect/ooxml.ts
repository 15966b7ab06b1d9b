import type { OrgDocType } from "../domain/formats.ts";
import { parseAttributes } from "./odf.ts";

/**
 * Office Open XML packages (ECMA-376 Part 2, OPC): the package relationship of type
 * `officeDocument` in `_rels/.rels` names the main part, and `[Content_Types].xml` gives that
 * part's content type, which says what the package is. Names and extensions are never consulted:
 * a .docm, .dotx or a Strict document is told apart by this content type alone.
 */

const MAIN_CONTENT_TYPES = new Map<string, OrgDocType>([
  ["application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml", "docx"],
  ["application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml", "docx"],
  ["application/vnd.ms-word.document.macroenabled.main+xml", "docx"],
  ["application/vnd.ms-word.template.macroenabledtemplate.main+xml", "docx"],
  ["application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml", "pptx"],
  ["application/vnd.openxmlformats-officedocument.presentationml.template.main+xml", "pptx"],
  ["application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml", "pptx"],
  ["application/vnd.ms-powerpoint.presentation.macroenabled.main+xml", "pptx"],
  ["application/vnd.ms-powerpoint.template.macroenabled.main+xml", "pptx"],
  ["application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml", "pptx"],
  ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml", "xlsx"],
  ["application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml", "xlsx"],
  ["application/vnd.ms-excel.sheet.macroenabled.main+xml", "xlsx"],
  ["application/vnd.ms-excel.template.macroenabled.main+xml", "xlsx"],
]);

/** Transitional and Strict spellings of the main-document relationship. */
const OFFICE_DOCUMENT_RELS = new Set([
  "http://schemas.openxmlformats.org/officedocument/2006/relationships/officedocument",
  "http://purl.oclc.org/ooxml/officedocument/relationships/officedocument",
]);

export const CONTENT_TYPES_PART = "[Content_Types].xml";
export const PACKAGE_RELS_PART = "_rels/.rels";

/** The main part's zip entry name (no leading slash), from the package relationships. */
export function mainPartName(relsXml: string): string | null {
  for (const match of relsXml.matchAll(/<(?:[\w.-]+:)?Relationship\b([^>]*)>/g)) {
    const attrs = parseAttributes(match[1] ?? "");
    if (!OFFICE_DOCUMENT_RELS.has((attrs.get("Type") ?? "").toLowerCase())) continue;
    if ((attrs.get("TargetMode") ?? "Internal") !== "Internal") return null;
    return resolveTarget(decodeXmlText(attrs.get("Target") ?? ""));
  }
  return null;
}

/** The package's type: the main part's content type (an Override for it, else the Default for its extension). */
export function ooxmlType(contentTypesXml: string, partName: string): OrgDocType | null {
  const wanted = `/${partName}`.toLowerCase(); // part names compare case-insensitively (OPC §9.1.1)
  const extension = partName.slice(partName.lastIndexOf(".") + 1).toLowerCase();
  let fromDefault: string | undefined;
  for (const match of contentTypesXml.matchAll(/<(?:[\w.-]+:)?(Override|Default)\b([^>]*)>/g)) {
    const attrs = parseAttributes(match[2] ?? "");
    const contentType = decodeXmlText(attrs.get("ContentType") ?? "");
    if (match[1] === "Override" && decodeXmlText(attrs.get("PartName") ?? "").toLowerCase() === wanted) {
      return MAIN_CONTENT_TYPES.get(contentType.trim().toLowerCase()) ?? null;
    }
    if (match[1] === "Default" && (attrs.get("Extension") ?? "").toLowerCase() === extension) fromDefault = contentType;
  }
  return fromDefault === undefined ? null : (MAIN_CONTENT_TYPES.get(fromDefault.trim().toLowerCase()) ?? null);
}

/** A package-relative target (`word/document.xml`, `/word/document.xml`, `./x/../word/document.xml`) as a zip entry name. */
function resolveTarget(target: string): string | null {
  let path: string;
  try {
    path = decodeURIComponent(target);
  } catch {
    return null;
  }
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.pop() === undefined) return null;
    } else {
      parts.push(part);
    }
  }
  return parts.length > 0 ? parts.join("/") : null;
}

function decodeXmlText(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}
