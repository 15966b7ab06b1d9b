/**
 * The reader's searches (`?q=`), built in a thread of their own (reader-render-pool.ts): the
 * pages holding the query and the whole reader page around them, hashed. The thread keeps the
 * last document's text it was sent, so a run of searches of one document sends it once.
 */
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { searchPages, type TextModel } from "./page-text.ts";
import { answerEtag, COMPRESSION, type Encoding } from "./page-answers.ts";
import { trusted } from "./html.ts";
import { readerPage, type ReaderView } from "./reader-page.ts";
import { loadWebAssets } from "./web-assets.ts";

export type RenderText = Pick<TextModel, "html" | "folded" | "text">;

export interface RenderTask {
  id: number;
  /** The text's key (blobId/pageCount); `text` comes with it when the thread does not hold it yet. */
  textKey: string;
  text?: RenderText;
  /** `feedbackHtml`: the ratings and comments' markup, made where the store is (an Html does not cross threads). */
  view: Omit<ReaderView, "pageHtml" | "assets" | "hits" | "feedback"> & { feedbackHtml?: string };
  /** The encoding the reader takes (when the page is worth compressing): compressed here too, at this thread's priority. */
  encoding: Encoding | undefined;
}

export type RenderAnswer =
  /** `bytes`: the page in the encoding asked for (as it is when none was); `etag`: the hash of the page as it is. */
  | { id: number; ok: true; bytes: Uint8Array; etag: string }
  | { id: number; ok: false; message: string };

/** A buffer of its own (never a slice of Node's pool), so it can be handed over without a copy. */
function own(b: Buffer): Uint8Array<ArrayBuffer> {
  const u = new Uint8Array(b.length);
  u.set(b);
  return u;
}

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
    const { feedbackHtml, ...view } = task.view;
    const hits = view.query ? searchPages(held.text as TextModel, view.query) : undefined;
    const feedback = feedbackHtml === undefined ? undefined : trusted(feedbackHtml);
    const body = Buffer.from(readerPage({ ...view, pageHtml: held.text.html, assets, hits, feedback }).value);
    // Only the form sent goes back: a megabyte of page per search is garbage the event loop need not collect.
    const bytes = own(task.encoding === "br" ? brotliCompressSync(body, COMPRESSION.br(body.length))
      : task.encoding === "gzip" ? gzipSync(body, COMPRESSION.gzip)
      : body);
    parentPort!.postMessage({ id: task.id, ok: true, bytes, etag: answerEtag(body) } satisfies RenderAnswer, [bytes.buffer]);
  } catch (err) {
    parentPort!.postMessage({ id: task.id, ok: false, message: String((err as Error)?.message ?? err) } satisfies RenderAnswer);
  }
});
