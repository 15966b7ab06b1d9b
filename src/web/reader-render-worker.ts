/**
 * The reader's searches (`?q=`), built in a thread of their own (reader-render-pool.ts): the
 * pages holding the query and the whole reader page around them, hashed. The thread keeps the
 * last document's text it was sent, so a run of searches of one document sends it once.
 */
import { createHash } from "node:crypto";
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { searchPages, type TextModel } from "./page-text.ts";
import { readerPage, type ReaderView } from "./reader-page.ts";
import { loadWebAssets } from "./web-assets.ts";

export type RenderText = Pick<TextModel, "html" | "folded" | "text">;

export interface RenderTask {
  id: number;
  /** The text's key (blobId/pageCount); `text` comes with it when the thread does not hold it yet. */
  textKey: string;
  text?: RenderText;
  view: Omit<ReaderView, "pageHtml" | "assets" | "hits">;
}

export type RenderAnswer = { id: number; ok: true; body: Uint8Array; etag: string } | { id: number; ok: false; message: string };

// As the search threads: the event loop's requests go first when the cores are busy (Linux: per thread).
try {
  setPriority(10);
} catch {
  // not permitted here
}
const assets = loadWebAssets();
let held: { key: string; text: RenderText } | undefined;

parentPort!.on("message", (task: RenderTask) => {
  try {
    if (task.text) held = { key: task.textKey, text: task.text };
    if (held?.key !== task.textKey) throw new Error("reader render: text not sent");
    const { view } = task;
    const hits = view.query ? searchPages(held.text as TextModel, view.query) : undefined;
    const body = Buffer.from(readerPage({ ...view, pageHtml: held.text.html, assets, hits }).value);
    const etag = createHash("sha256").update(body).digest("base64url").slice(0, 27);
    // A buffer of its own (not a slice of Node's pool), handed over without a copy.
    const own = new Uint8Array(body.length);
    own.set(body);
    parentPort!.postMessage({ id: task.id, ok: true, body: own, etag } satisfies RenderAnswer, [own.buffer]);
  } catch (err) {
    parentPort!.postMessage({ id: task.id, ok: false, message: String((err as Error)?.message ?? err) } satisfies RenderAnswer);
  }
});
