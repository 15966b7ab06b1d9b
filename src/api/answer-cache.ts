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
  private readonly entries = new Map<string, CachedAnswer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  keyFor(caller: Caller, params: RequestParams): string {
    let question = "";
    for (const [name, value] of params.entries()) {
      if (!NOT_PART_OF_THE_QUESTION.has(name)) question += `${name.length}:${name}=${value.length}:${value}&`;
    }
    return `${caller.accountId}/${caller.documentsVersion}/${caller.action}?${question}`;
  }

  get(key: string): CachedAnswer | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, rendered: Rendered): void {
    const answer: CachedAnswer = { contentType: rendered.contentType, body: Buffer.from(rendered.body, "utf8") };
    const size = key.length + answer.body.length;
    if (size > this.maxBytes / 8) return; // one huge answer must not flush everything else
    const previous = this.entries.get(key);
    if (previous) this.forget(key, previous);
    this.entries.set(key, answer);
    this.bytes += size;
    for (const [oldKey, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.forget(oldKey, old);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private forget(key: string, answer: CachedAnswer): void {
    this.entries.delete(key);
    this.bytes -= key.length + answer.body.length;
  }
}
