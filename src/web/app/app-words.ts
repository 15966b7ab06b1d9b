import { CATEGORIES, DOCUMENT_TYPES } from "../../domain/codes.ts";
import type { DocumentRecord, DocumentState } from "../../domain/document.ts";

/** A document's state for people (decisions §6). */
export const STATE_LABELS: Readonly<Record<DocumentState, string>> = { P: "Processing", A: "Published", F: "Failed", D: "Draft (v2, not published)" };

/** Why a document failed, in words: the record's own sentence, else one from its code (decisions §6). */
const FAILURE_WORDS: Readonly<Record<number, string>> = {
  1: "The file could not be fetched from its address.",
  2: "The file is not in a format Quire can publish.",
  3: "The file is damaged and could not be read.",
  4: "The file is protected by a password.",
  5: "The file is beyond the limits of pages, size or time.",
  9: "Something went wrong on our side while publishing it.",
};

export function failureReason(doc: Pick<DocumentRecord, "state" | "errorCode" | "errorMessage">): string | undefined {
  if (doc.state !== "F") return undefined;
  return doc.errorMessage || FAILURE_WORDS[doc.errorCode] || FAILURE_WORDS[9];
}

export const categoryName = (code: string) => CATEGORIES[code] ?? CATEGORIES["000000"]!;
export const typeName = (code: string) => DOCUMENT_TYPES[code] ?? DOCUMENT_TYPES["000000"]!;

const languageNames = new Intl.DisplayNames(["en"], { type: "language", fallback: "code" });
export function languageName(code: string): string {
  if (code === "") return "Not set";
  try {
    return languageNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** `2024-05-31` (UTC), as dates are kept. */
export const shortDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
