import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import type { DocumentRecord } from "../../src/domain/document.ts";
import type { Services } from "../../src/services.ts";

/** Polls `cond` every `everyMs` until it holds; fails naming `what` after `ms`. Tests wait with this, never with a fixed sleep. */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string, everyMs = 25): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Polls until the document leaves P (its conversion ended, either way) and answers its record; fails after `ms`. */
export async function settled(server: { services: Pick<Services, "store"> }, documentId: string, ms: number, everyMs = 100): Promise<DocumentRecord> {
  let doc: DocumentRecord | undefined;
  await until(
    async () => {
      doc = await server.services.store.documents.getForConversion(documentId);
      assert.ok(doc, `${documentId} exists`);
      return doc.state !== "P";
    },
    ms,
    `${documentId} to leave P`,
    everyMs,
  );
  return doc!;
}
