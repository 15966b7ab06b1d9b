import { SizeBoundedLru } from "../size-bounded-lru.ts";
import type { Caller } from "./authenticate.ts";
import type { Rendered } from "./envelope.ts";

/** A rendered answer kept as the bytes sent, so a hit does not encode the same text again. */
export interface CachedAnswer {
  readonly contentType: string;
  readonly body: Buffer;
}
import type { RequestParams } from "./params.ts";

/** Parameters that identify the caller rather than the question: the same answer serves every key. */
const NOT_PART_OF_THE_QUESTION = new Set(["apiKey", "signature"]);

/**
 * Answers of operations that read nothing but the caller's own documents, kept under
 * the account's `documentsVersion` (which the database moves on every change to those rows), so a
 * hit is exactly the answer a fresh computation would give. Least recently used entries go first
 * once the total size passes `maxBytes`; versions no longer current are never asked for again
 * and age out the same way.
 */
export class AnswerCache {
  private readonly entries: SizeBoundedLru<string, CachedAnswer>;

  constructor(maxBytes: number) {
    // One huge answer must not flush everything else.
    this.entries = new SizeBoundedLru({ maxTotal: maxBytes, maxEntry: maxBytes / 8 }, (key, answer) => key.length + answer.body.length);
  }

  keyFor(caller: Caller, params: RequestParams): string {
    let question = "";
    for (const [name, value] of params.entries()) {
      if (!NOT_PART_OF_THE_QUESTION.has(name)) question += `${name.length}:${name}=${value.length}:${value}&`;
    }
    return `${caller.accountId}/${caller.documentsVersion}/${caller.action}?${question}`;
  }

  get(key: string): CachedAnswer | undefined {
    return this.entries.get(key);
  }

  set(key: string, rendered: Rendered): void {
    this.entries.set(key, { contentType: rendered.contentType, body: Buffer.from(rendered.body, "utf8") });
  }
}
