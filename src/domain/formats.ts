/** The nine original formats the interface document supports (interface §2.1 `orgDocType`). */
export const ORG_DOC_TYPES = ["pdf", "odt", "doc", "wpd", "sxw", "sxi", "rtf", "odp", "ppt"] as const;
export type OrgDocType = (typeof ORG_DOC_TYPES)[number];

/** Until a URL upload is fetched its type may be unknown (decisions §5). */
export type RecordedDocType = OrgDocType | "unknown";

export function isOrgDocType(value: string): value is OrgDocType {
  return (ORG_DOC_TYPES as readonly string[]).includes(value);
}

/** Formats LibreOffice must turn into PDF before pages can be rendered. */
export function needsOfficeConversion(type: OrgDocType): boolean {
  return type !== "pdf";
}
