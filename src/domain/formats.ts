/**
 * The formats Quire accepts (decisions §5): the nine of the interface document (interface §2.1
 * `orgDocType`) in every variant LibreOffice imports, then the office, text and image formats
 * added beyond it. A variant (a template, a macro-enabled file, an older version) is recorded
 * under its family's type: a .docm is `docx`, an .ott is `odt`, Word 6 is `doc`.
 */
export const ORG_DOC_TYPES = [
  "pdf", "odt", "doc", "wpd", "sxw", "sxi", "rtf", "odp", "ppt",
  "docx", "pptx", "xlsx", "xls", "ods", "odg",
  "txt",
  "jpg", "png", "tif", "gif", "bmp", "webp",
] as const;
export type OrgDocType = (typeof ORG_DOC_TYPES)[number];

/** Until a URL upload is fetched its type may be unknown (decisions §5). */
export type RecordedDocType = OrgDocType | "unknown";

export function isOrgDocType(value: string): value is OrgDocType {
  return (ORG_DOC_TYPES as readonly string[]).includes(value);
}

/** How a format becomes pages: a PDF as it is, office files through LibreOffice, images and text by our own converters. */
export type ConversionRoute = "pdf" | "office" | "image" | "text";

const IMAGE_TYPES = ["jpg", "png", "tif", "gif", "bmp", "webp"] as const satisfies readonly OrgDocType[];
export type ImageType = (typeof IMAGE_TYPES)[number];

export function isImageType(type: OrgDocType): type is ImageType {
  return (IMAGE_TYPES as readonly OrgDocType[]).includes(type);
}

export function conversionRoute(type: OrgDocType): ConversionRoute {
  if (type === "pdf") return "pdf";
  if (type === "txt") return "text";
  return isImageType(type) ? "image" : "office";
}

/** File-name extensions that name a variant of a type (used only where a name is all there is: a URL before its fetch). */
const EXTENSION_ALIASES: Readonly<Record<string, OrgDocType>> = {
  jpeg: "jpg", jpe: "jpg", tiff: "tif", text: "txt",
  docm: "docx", dotx: "docx", dotm: "docx",
  pptm: "pptx", potx: "pptx", potm: "pptx", ppsx: "pptx", ppsm: "pptx",
  xlsm: "xlsx", xltx: "xlsx", xltm: "xlsx",
  xlt: "xls", dot: "doc", pot: "ppt", pps: "ppt",
  ott: "odt", fodt: "odt", otp: "odp", fodp: "odp", ots: "ods", fods: "ods", otg: "odg", fodg: "odg",
  stw: "sxw", sti: "sxi", wp: "wpd", wp5: "wpd", wp6: "wpd",
};

/** The type a file-name extension names (case-insensitive), or undefined. Content decides in the end. */
export function docTypeFromExtension(ext: string): OrgDocType | undefined {
  const lower = ext.toLowerCase();
  return isOrgDocType(lower) ? lower : EXTENSION_ALIASES[lower];
}

/**
 * The type a file's name claims when its content (`detected`) is another (decisions §5: content
 * decides, so such a file is published as what it is; the publisher is told). Undefined when the
 * name agrees, has no extension, or names no supported type.
 */
export function typeClaimedByName(fileName: string, detected: RecordedDocType): OrgDocType | undefined {
  const ext = /\.([^./\\]+)$/.exec(fileName)?.[1];
  const claimed = ext === undefined ? undefined : docTypeFromExtension(ext);
  return claimed !== undefined && detected !== "unknown" && claimed !== detected ? claimed : undefined;
}
