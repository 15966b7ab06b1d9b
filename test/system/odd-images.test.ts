import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { IMAGE_EXTENSION } from "../../src/convert/pdf-render.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { settled } from "../helpers/poll.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/**
 * Issue 27: images of odd sizes and depths publish, and their text is read. A 1 × 1 PNG used to
 * end in F "The PDF file is damaged" (its 0.75 pt page made pdftoppm fail); a 1-bit CCITT G4 fax
 * (WhiteIsZero) at 72 dpi and a 16-bit grey PNG are made here from the phototest scan, whose text
 * is known.
 */

const PHOTOTEST = join(FIXTURES, "ocr-phototest-tesseract.tif");

async function fax(path: string, dpi: number): Promise<void> {
  const { width = 0 } = await sharp(PHOTOTEST).metadata();
  const scaled = await sharp(PHOTOTEST).resize({ width: Math.round((width * dpi) / 200), kernel: "lanczos3" }).threshold(160).toColourspace("b-w").png().toBuffer();
  await sharp(scaled).extractChannel(0).tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, xres: dpi / 25.4, yres: dpi / 25.4 }).toFile(path);
}

async function grey16(path: string): Promise<void> {
  const { data, info } = await sharp(PHOTOTEST).toColourspace("b-w").raw().toBuffer({ resolveWithObject: true });
  await sharp(Uint16Array.from(data, (v) => v * 257), { raw: { width: info.width, height: info.height, channels: 1 } }).toColourspace("grey16").png().toFile(path);
}

describe("odd images publish", { timeout: 300_000 }, () => {
  let server: TestServer;
  let worker: TestWorker;
  let client: QuireClient;
  let dir: string;
  before(async () => {
    server = await startTestServer({ QUIRE_RATE_PER_SECOND: "0" });
    worker = await startTestWorker(server, { startOffice: false, maxAttempts: 1 });
    client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    dir = await mkdtemp(join(tmpdir(), "quire-odd-images-"));
  });
  after(async () => {
    await worker?.stop();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function publish(name: string): Promise<{ documentId: string; blobId: string; pageCount: number; description: string }> {
    const doc = unwrap(await client.upload(join(dir, name), { title: name })).document as { documentId: string };
    const d = await settled(server, doc.documentId, 240_000);
    assert.equal(d.state, "A", `${name}: ${d.state} ${d.errorCode} ${d.errorMessage}`);
    const rec = (await server.services.store.documents.getForConversion(doc.documentId))!;
    return { documentId: doc.documentId, blobId: rec.blobId, pageCount: d.pageCount, description: d.description };
  }

  async function blob(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of await server.services.blobs.get(key)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  async function pageText(blobId: string): Promise<string[]> {
    return (JSON.parse((await blob(blobKeys.text(blobId))).toString("utf8")) as { text: string }[]).map((p) => p.text.replace(/\s+/g, " "));
  }

  /** Mean brightness 0..255 of a page's reading image: paper is white, not black (an inverted WhiteIsZero fax would be). */
  async function brightness(blobId: string, page: number): Promise<number> {
    const stats = await sharp(await blob(blobKeys.page(blobId, page, "read", IMAGE_EXTENSION))).greyscale().stats();
    return stats.channels[0]!.mean;
  }

  test("a 1 × 1 PNG and a 20000 × 20 PNG publish, each as one page", async () => {
    await sharp({ create: { width: 1, height: 1, channels: 3, background: "#336699" } }).png().toFile(join(dir, "dot.png"));
    await sharp({ create: { width: 20000, height: 20, channels: 3, background: "#ffffff" } }).png().toFile(join(dir, "strip.png"));
    for (const name of ["dot.png", "strip.png"]) {
      const d = await publish(name);
      assert.equal(d.pageCount, 1, name);
      assert.ok((await blob(blobKeys.page(d.blobId, 1, "read", IMAGE_EXTENSION))).length > 0, `${name}: its page image`);
    }
  });

  test("a 20 × 20000 PNG is refused with code 5 and a true reason, not as damaged", async () => {
    await sharp({ create: { width: 20, height: 20000, channels: 3, background: "#ffffff" } }).png().toFile(join(dir, "tall.png"));
    const doc = unwrap(await client.upload(join(dir, "tall.png"))).document as { documentId: string };
    const d = await settled(server, doc.documentId, 240_000);
    assert.equal(d.state, "F");
    assert.equal(d.errorCode, 5);
    assert.match(d.errorMessage, /too large to publish/);
  });

  test("a 1-bit CCITT G4 WhiteIsZero fax at 72 dpi publishes white pages with its text", async () => {
    await fax(join(dir, "fax.tif"), 72);
    const meta = await sharp(join(dir, "fax.tif")).metadata();
    assert.equal(meta.bitsPerSample, 1);
    assert.ok((meta.height ?? 0) < 200, "a small fax page");
    const d = await publish("fax.tif");
    const [text] = await pageText(d.blobId);
    assert.match(text ?? "", /quick brown dog jumped over the lazy fox/, "the fax's text is read");
    assert.match(d.description, /quick brown/, "and becomes its description");
    assert.ok((await brightness(d.blobId, 1)) > 200, "the page is white paper with black text");
  });

  test("a 16-bit grey PNG publishes with its text", async () => {
    await grey16(join(dir, "deep.png"));
    assert.equal((await sharp(join(dir, "deep.png")).metadata()).depth, "ushort");
    const d = await publish("deep.png");
    const [text] = await pageText(d.blobId);
    assert.match(text ?? "", /This is a lot of 12 point text to test the ocr code/);
    assert.ok((await brightness(d.blobId, 1)) > 200);
  });
});
