/**
 * Why a conversion ended, as the `errorCode` values of decisions §6. `transient` failures
 * (network trouble, a crashed converter) are retried with backoff; the others end the document in F.
 */
export const CONVERSION_ERROR_CODES = {
  fetch: 1,
  format: 2,
  corrupt: 3,
  encrypted: 4,
  limits: 5,
  internal: 9,
} as const;

export type ConversionErrorKind = keyof typeof CONVERSION_ERROR_CODES;

export class ConversionError extends Error {
  readonly kind: ConversionErrorKind;
  readonly transient: boolean;

  /** `message` is a sentence for people: it becomes the document's `errorMessage`. */
  constructor(kind: ConversionErrorKind, message: string, opts: { transient?: boolean; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = "ConversionError";
    this.kind = kind;
    this.transient = opts.transient ?? false;
  }

  get code(): number {
    return CONVERSION_ERROR_CODES[this.kind];
  }
}
