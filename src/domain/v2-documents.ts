import type { Access, DocumentRecord } from "./document.ts";
import { updateDocument, type UpdatePort } from "./document-operations.ts";
import type { DocumentChanges } from "./document-update.ts";
import { nameBaseFromTitle, nameCandidates } from "./document-name.ts";
import type { RecordedDocType } from "./formats.ts";

/**
 * The v2 API's view of Quire's one document model (decisions §14): its enums, how a document's
 * record and its v2 row map to them, and the publish of a draft. No I/O: callers pass the store.
 */

export const V2_STATES = ["DRAFT", "PUBLISHED", "SCHEDULED", "UNPUBLISHED", "QUARANTINED"] as const;
export type V2State = (typeof V2_STATES)[number];
export type ConversionStatus = "CONVERTING" | "DONE" | "FAILED";
export const V2_DOCUMENT_TYPES = ["editorial", "book", "promotional", "other"] as const;
export type V2FileType = "UNKNOWN" | "DOC" | "ODP" | "ODT" | "PDF" | "PPT" | "RTF" | "SXI" | "SXW" | "WPD" | "EPUB" | "MOBI";

/** What a v2 row holds (src/store/document-v2.ts), read back. */
export interface V2Row {
  /** v2-only fields: preview, type, showDetectedLinks, isCopyrightConfirmed, scheduledTime, desiredName. */
  info: Record<string, unknown>;
  /** Edits of a published document staged until its next publish. */
  changes: Record<string, unknown> | null;
  scheduledAt: number | null;
}

/** The v2-only fields of a document, with their defaults. */
export interface V2Extras {
  preview: boolean;
  type: (typeof V2_DOCUMENT_TYPES)[number];
  showDetectedLinks: boolean;
  isCopyrightConfirmed: boolean;
}

export function v2Extras(row: V2Row | undefined): V2Extras {
  const info = row?.info ?? {};
  const type = V2_DOCUMENT_TYPES.find((t) => t === info.type) ?? "other";
  return { preview: info.preview === true, type, showDetectedLinks: info.showDetectedLinks === true, isCopyrightConfirmed: info.isCopyrightConfirmed === true };
}

/** Whether a file was ever given: a draft made without one has neither a name nor an address. */
export function hasFile(doc: DocumentRecord): boolean {
  return doc.orgDocName !== "" || doc.slurpUrl !== "";
}

export function v2StateOf(doc: DocumentRecord, row: V2Row | undefined): V2State {
  if (doc.draft !== true) return "PUBLISHED";
  return row?.scheduledAt != null ? "SCHEDULED" : "DRAFT";
}

export function conversionStatusOf(doc: DocumentRecord): ConversionStatus {
  if (doc.state === "P") return "CONVERTING";
  if (doc.state === "F") return "FAILED";
  return "DONE";
}

/** Only the twelve values the C# client parses (research §2.6); the formats v2 does not name are UNKNOWN. */
const FILE_TYPES: Partial<Record<RecordedDocType, V2FileType>> = {
  pdf: "PDF", doc: "DOC", ppt: "PPT", odt: "ODT", odp: "ODP", rtf: "RTF", wpd: "WPD", sxw: "SXW", sxi: "SXI",
};

export function v2FileType(t: RecordedDocType): V2FileType {
  return FILE_TYPES[t] ?? "UNKNOWN";
}

export const v2Access = (a: Access): "PUBLIC" | "PRIVATE" => (a === "public" ? "PUBLIC" : "PRIVATE");

/** A validated v2 `info` object (schema-checked by the API; booleans may have come as strings). */
export interface V2Info {
  title?: string;
  description?: string;
  access?: "PUBLIC" | "PRIVATE";
  downloadable?: boolean;
  originalPublishDate?: number | null;
  preview?: boolean;
  type?: (typeof V2_DOCUMENT_TYPES)[number];
  showDetectedLinks?: boolean;
  scheduledTime?: number | null;
}

/** The part of `info` that Quire's record holds, as an update of it (v1's rules apply). */
export function recordChangesOf(info: V2Info, now: number): DocumentChanges {
  const c: DocumentChanges = {};
  if (info.title !== undefined) c.title = info.title;
  if (info.description !== undefined) c.description = info.description;
  if (info.access !== undefined) c.access = info.access === "PUBLIC" ? "public" : "private";
  if (info.downloadable !== undefined) c.downloadable = info.downloadable;
  // null clears the back date: the document then counts as published when it was made.
  if (info.originalPublishDate !== undefined) c.publishDate = info.originalPublishDate ?? now;
  return c;
}

/** The v2-only part of `info`, merged into what the row holds. */
export function extrasOf(info: V2Info, before: Record<string, unknown>): Record<string, unknown> {
  const out = { ...before };
  if (info.preview !== undefined) out.preview = info.preview;
  if (info.type !== undefined) out.type = info.type;
  if (info.showDetectedLinks !== undefined) out.showDetectedLinks = info.showDetectedLinks;
  return out;
}

/** Why a publish is refused: values of v2's `publishFailedReason` enum (research §2.6). */
export type PublishRefusal = "file_not_converted" | "missing_file" | "missing_title";

export interface PublishPort extends UpdatePort {
  takenNames(accountId: number, candidates: string[]): Promise<Set<string>>;
  publishDraft(accountId: number, documentId: string, patch: { name: string; nameGiven: number; updatedAt: number }): Promise<{ ok: true } | { ok: false; reason: "name-taken" | "not-found" }>;
}

export type PublishOutcome = { ok: true; doc: DocumentRecord } | { ok: false; reason: PublishRefusal | "not-found" };

/** Why a draft cannot be published now, or undefined when it can. */
export function publishRefusal(doc: DocumentRecord): PublishRefusal | undefined {
  if (doc.draft !== true) return undefined;
  if (!hasFile(doc)) return "missing_file";
  if (doc.state !== "D") return "file_not_converted";
  if (doc.title.trim() === "") return "missing_title";
  return undefined;
}

/**
 * The name a draft gets at its first publish: `desiredName` made into a name (as a title is), with
 * `-2`, `-3`... when taken; without it, a public document's name comes from its title and a
 * private one keeps its documentId, which no one can guess (decisions §5). Nothing free: the documentId.
 */
/**
 * The name a draft's first publish gives it now: from `desiredName`, else a public document's
 * title, with a suffix when taken; else its documentId. A scheduled publish answers the address
 * this makes, and gets the same name at its time unless another document took it meanwhile.
 */
export async function firstName(port: Pick<PublishPort, "takenNames">, doc: DocumentRecord, desiredName: string | undefined): Promise<{ name: string; given: boolean }> {
  const base = desiredName !== undefined ? nameBaseFromTitle(desiredName) : doc.access === "public" ? nameBaseFromTitle(doc.title) : undefined;
  if (base === undefined) return { name: doc.documentId, given: false };
  const candidates = nameCandidates(base);
  const taken = await port.takenNames(doc.accountId, candidates);
  const free = candidates.find((c) => !taken.has(c));
  return free === undefined ? { name: doc.documentId, given: false } : { name: free, given: desiredName !== undefined };
}

/**
 * `POST /v2/drafts/{slug}/publish`: a converted draft becomes a published document (D -> A, its
 * `document.active` webhook, findable); a published one gets its staged `changes` (passed here as
 * record changes; the caller clears them). `desiredName` counts on the first publish only.
 */
export async function publishDocument(
  port: PublishPort,
  doc: DocumentRecord,
  desiredName: string | undefined,
  staged: DocumentChanges | undefined,
  now: number,
): Promise<PublishOutcome> {
  if (doc.draft === true) {
    const refusal = publishRefusal(doc);
    if (refusal !== undefined) return { ok: false, reason: refusal };
    const updatedAt = Math.max(now, (Math.floor(doc.updatedAt / 1000) + 1) * 1000);
    const first = await firstName(port, doc, desiredName);
    let written = await port.publishDraft(doc.accountId, doc.documentId, { name: first.name, nameGiven: first.given ? 1 : 0, updatedAt });
    // Another document took the name between the look and the write: the documentId is always free.
    if (!written.ok && written.reason === "name-taken") {
      written = await port.publishDraft(doc.accountId, doc.documentId, { name: doc.documentId, nameGiven: 0, updatedAt });
    }
    if (!written.ok) return { ok: false, reason: "not-found" };
  }
  if (staged !== undefined && Object.keys(staged).length > 0) await updateDocument(port, doc.accountId, doc.documentId, staged, now);
  const after = await port.getById(doc.accountId, doc.documentId);
  return after ? { ok: true, doc: after } : { ok: false, reason: "not-found" };
}
