/**
 * The one catalogue of API error codes, with the exact messages of the interface document (§7)
 * and decisions §9. test/domain/errors.test.ts ties it to the spec text.
 */
export const ERROR_MESSAGES = {
  "009": "Authentication required",
  "010": "Invalid API key",
  "011": "Bad signature",
  "012": "Request throttled",
  "090": "Embed not found",
  "200": "Required field is missing",
  "201": "Invalid field format",
  "205": "File size is too large",
  "261": "Folder name exists for user",
  "300": "Document not found",
  "307": "Document still converting",
  "308": "Document failed conversion.",
  "311": "Page not found",
  "500": "Internal error",
} as const;

export type ErrorCode = keyof typeof ERROR_MESSAGES;

/** A failure the caller caused (or 500): carried up to the envelope writer unchanged. */
export class QuireError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;

  constructor(code: ErrorCode, field?: string) {
    super(field ? `${ERROR_MESSAGES[code]} (${field})` : ERROR_MESSAGES[code]);
    this.name = "QuireError";
    this.code = code;
    this.field = field;
  }
}

export const missing = (field: string) => new QuireError("200", field);
export const invalid = (field: string) => new QuireError("201", field);
