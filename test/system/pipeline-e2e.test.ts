import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { QuireClient, unwrap } from "../../src/client/quire-client.ts";
import { docTypeFromExtension } from "../../src/domain/formats.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { settled as settledIn } from "../helpers/poll.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { dbOf } from "../helpers/store-db.ts";

/** Page counts as the fixtures' MANIFEST records them (LibreOffice 7.4 / poppler). */
async function manifestPages(): Promise<Map<string, number>> {
  const text = await readFile(join(FIXTURES, "MANIFEST.md"), "utf8");
  const pages = new Map<string, number>();
  for (const m of text.matchAll(/^\| `([^`]+)` \| \w+ \|[^|]*\|[^|]*\| \d+ \| (\d+|-) \|/gm)) {
    if (m[2] !== "-") pages.set(m[1]!, Number(m[2]));
  }
  return pages;
}

/**
 * The MANIFEST's counts came from a machine with another font set. With the fonts that
 * scripts/install-system-deps.sh installs (Liberation, Carlito, Caladea, Noto incl. CJK),
 * LibreOffice 7.4 lays these out differently, plain `soffice --convert-to` included.
 */
const PAGES_WITH_OUR_FONTS: Record<string, number> = {
  "odt-toc-15pages-lo54.odt": 14,
  "rtf-form-8pages-tika.rtf": 7,
  "rtf-japanese-tika.rtf": 2,
  "winword2-19pages-newsslid.doc": 17,
  "word97-30pages-annex.doc": 32,
};

/** What each problem file must end as (decisions §6). */
const BAD_OUTCOMES: Record<string, { state: "A" | "F"; errorCode?: number; pages?: number }> = {
  "bad/pdf-encrypted-user-password.pdf": { state: "F", errorCode: 4 },
  "bad/pdf-corrupt-no-trailer.pdf": { state: "F", errorCode: 3 },
  "bad/pdf-truncated-half.pdf": { state: "F", errorCode: 3 },
  "bad/pdf-invalid-xref-entry-renders.pdf": { state: "A", pages: 2 },
  "bad/pdf-junk-header-missing-startxref.pdf": { state: "A", pages: 1 },
  "bad/wordperfect51-named.doc": { state: "A", pages: 1 },
  "bad/word-encrypted-cryptoapi.doc": { state: "F", errorCode: 4 },
  "bad/ppt-encrypted.ppt": { state: "F", errorCode: 4 },
  "bad/odt-encrypted.odt": { state: "F", errorCode: 4 },
  "bad/odp-libreoffice-hangs.odp": { state: "F", errorCode: 5 },
  "bad/docx-encrypted-password-pass.docx": { state: "F", errorCode: 4 },
  "bad/xlsx-encrypted-password-pwd123.xlsx": { state: "F", errorCode: 4 },
  "bad/xls-encrypted-xor-abc.xls": { state: "F", errorCode: 4 },
  "bad/scan-page.png": { state: "A", pages: 1 }, // an image, now a supported format
  "bad/text-not-zip.odt": { state: "A", pages: 1 }, // plain text named .odt: published as the text it is
  "bad/jpg-truncated-pillow.jpg": { state: "F", errorCode: 3 },
  "bad/gif-decompression-bomb-pillow.gif": { state: "F", errorCode: 5 }, // a 4.4 Gpixel canvas in 44 bytes
  "bad/pdf-enormous-page-81mpx-ocrmypdf.pdf": { state: "A", pages: 1 }, // rendered, and OCR'd, below the pixel caps
};

/** Problem files that are none of the supported formats: refused at upload (201 on file), nothing stored. */
const REFUSED = [
  "bad/doc-random-bytes-corrupted.doc",
  "bad/docx-truncated-tika.docx",
  "bad/empty.pdf",
  "bad/hello.zip",
  "bad/ibm-displaywrite-named.doc",
  "bad/odp-corrupt-zip.odp",
  "bad/pptx-corrupted-alfresco.pptx",
];

/** Converted by a test of its own, for its size: the 352-page book (test/convert/pdf-pages.test.ts). */
const ELSEWHERE = ["bad/pdf-352-pages-freeculture.pdf"];

/** Every document of the fixtures: everything but the manifest and the OCR ground truths. */
const isDocument = (f: string) => f !== "MANIFEST.md" && !f.endsWith(".gt.txt");

interface Doc {
  documentId: string;
  name: string;
  state: string;
  pageCount: number;
  errorCode: number;
  errorMessage: string;
  description: string;
  coverWidth: number;
  title: string;
}

describe("conversion pipeline, end to end", { timeout: 600_000 }, () => {
  let server: TestServer;
  let worker: TestWorker;
  let client: QuireClient;
  let web: Server;
  let webUrl: string;
  const uploaded = new Map<string, string>(); // fixture -> documentId

  before(async () => {
    server = await startTestServer();
    client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });
    // A job's limit as in production: the 100-slide deck has about 80 pages without text to OCR.
    worker = await startTestWorker(server, { officeTimeoutMs: 15_000, jobTimeoutMs: 900_000 });
    web = createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      // /file?name=… serves a fixture from an address whose path has no extension
      const file = url.pathname === "/file" ? url.searchParams.get("name")! : decodeURIComponent(url.pathname.slice(1));
      if (file === "missing.pdf") return void res.writeHead(404).end();
      readFile(join(FIXTURES, file)).then((b) => res.end(b), () => res.writeHead(404).end());
    });
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
    webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
  });
  after(async () => {
    await worker?.stop();
    web?.close();
    await server?.close();
  });

  const settled = async (documentId: string): Promise<Doc> => (await settledIn(server, documentId, 240_000)) as unknown as Doc;

  test("every good fixture and every problem file ends in its expected state", { timeout: 540_000 }, async () => {
    const pages = await manifestPages();
    const good = (await readdir(FIXTURES, { withFileTypes: true })).filter((e) => e.isFile() && isDocument(e.name)).map((e) => e.name);
    const bad = (await readdir(join(FIXTURES, "bad"))).filter(isDocument).map((f) => `bad/${f}`);
    assert.deepEqual(bad.sort(), [...Object.keys(BAD_OUTCOMES), ...REFUSED, ...ELSEWHERE].sort(), "every problem file has its expected outcome");
    for (const f of [...good, ...Object.keys(BAD_OUTCOMES)]) {
      const answer = unwrap(await client.upload(join(FIXTURES, f)));
      uploaded.set(f, (answer.document as Doc).documentId);
    }
    const failures: string[] = [];
    for (const f of REFUSED) {
      const error = (await client.upload(join(FIXTURES, f))).rsp._content?.error;
      if (error?.code !== "201" || error.field !== "file") failures.push(`${f}: answered ${JSON.stringify(error)} (want 201 on file)`);
    }
    for (const f of good) {
      const d = await settled(uploaded.get(f)!);
      const want = PAGES_WITH_OUR_FONTS[f] ?? pages.get(f);
      if (d.state !== "A" || d.pageCount !== want) failures.push(`${f}: ${d.state} ${d.pageCount} pages (want A ${want}) ${d.errorMessage}`);
      const rec = (await server.services.store.documents.getForConversion(d.documentId))!;
      if (rec.orgDocType !== docTypeFromExtension(f.split(".").pop()!)) failures.push(`${f}: orgDocType ${rec.orgDocType}`);
      const keys = await server.services.blobs.list(blobKeys.prefix(rec.blobId));
      const reads = keys.filter((k) => k.includes("/pages/read/")).length;
      const thumbs = keys.filter((k) => k.includes("/pages/thumb/")).length;
      // Thumbnails are variants of the reading size, made on request (src/page-variants.ts).
      if (reads !== d.pageCount || thumbs !== 0 || !keys.includes(blobKeys.text(rec.blobId))) {
        failures.push(`${f}: ${reads} reading images, ${thumbs} thumbnails, text ${keys.includes(blobKeys.text(rec.blobId))}`);
      }
    }
    for (const [f, want] of Object.entries(BAD_OUTCOMES)) {
      const d = await settled(uploaded.get(f)!);
      const ok = d.state === want.state && (want.errorCode === undefined || d.errorCode === want.errorCode) && (want.pages === undefined || d.pageCount === want.pages);
      if (!ok) failures.push(`${f}: ${d.state} code ${d.errorCode} ${d.pageCount} pages "${d.errorMessage}" (want ${JSON.stringify(want)})`);
      if (d.state === "F") assert.notEqual(d.errorMessage, "", `${f} says why it failed`);
    }
    assert.deepEqual(failures, []);
  });

  test("an active document has its pages, covers and text, a name from its title, and a description", async () => {
    const documentId = uploaded.get("pdf-tcpdf-14pages.pdf")!;
    const d = await settled(documentId);
    const rec = (await server.services.store.documents.getForConversion(documentId))!;
    const keys = await server.services.blobs.list(blobKeys.prefix(rec.blobId));
    assert.equal(keys.filter((k) => k.includes("/pages/read/")).length, 14);
    assert.equal(keys.filter((k) => k.includes("/pages/thumb/")).length, 0, "thumbnails are variants, made on request");
    assert.ok(keys.includes(blobKeys.text(rec.blobId)));
    assert.equal(keys.filter((k) => /cover-(small|medium|large)\./.test(k)).length, 3);
    assert.ok(d.coverWidth > 0);
    assert.equal(d.name, "pdf-tcpdf-14pages", "a name made from the title replaces the documentId");
    assert.ok(d.description.length > 0 && d.description.length <= 1000);
  });

  test("scans get their text by OCR: words with boxes in the text layer, a description found by svc.documents.list", async () => {
    for (const [f, word] of [["ocr-scanned-2pages-faa-advisory.pdf", "Coded Departure Routes"], ["ocr-phototest-tesseract.tif", "quick brown dog"]] as const) {
      const d = await settled(uploaded.get(f)!);
      assert.equal(d.state, "A", f);
      const rec = (await server.services.store.documents.getForConversion(d.documentId))!;
      const stored = await server.services.blobs.get(blobKeys.text(rec.blobId));
      const chunks: Buffer[] = [];
      for await (const c of stored) chunks.push(c as Buffer);
      const pages = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { page: number; text: string; words: { x: number; w: number }[] }[];
      assert.match(pages[0]!.text.replace(/\s+/g, " "), new RegExp(word), `${f}: page 1 text`);
      assert.ok(pages[0]!.words.length > 10 && pages[0]!.words.every((w) => w.x >= 0 && w.x + w.w <= 1.00001), `${f}: word boxes on the page`);
      const listed = unwrap(await client.call("documents.list", { orgDocName: f, responseParams: "documentId,description" }));
      const items = (listed.result as { _content: { document: { documentId: string; description: string } }[] })._content.map((i) => i.document);
      const found = items.find((i) => i.documentId === d.documentId);
      assert.match(found?.description.replace(/\s+/g, " ") ?? "", new RegExp(word), `${f}: description from the OCR'd text`);
    }
  });

  test("URL uploads are fetched, typed by content, and fail with 1 or 2 when they must", async () => {
    const ok = unwrap(await client.call("document.url_upload", { slurpUrl: `${webUrl}/odt-toc-15pages-lo54.odt` }));
    const zip = unwrap(await client.call("document.url_upload", { slurpUrl: `${webUrl}/bad/hello.zip` }));
    const missing = unwrap(await client.call("document.url_upload", { slurpUrl: `${webUrl}/missing.pdf` }));
    const typed = unwrap(await client.call("document.url_upload", { slurpUrl: `${webUrl}/file?name=pdf-quartz-firefox-1page.pdf` }));
    assert.equal((typed.document as { orgDocType: string }).orgDocType, "unknown", "no extension at the end of the address: unknown until fetched");

    const a = await settled((ok.document as Doc).documentId);
    assert.equal(a.state, "A");
    assert.equal(a.pageCount, PAGES_WITH_OUR_FONTS["odt-toc-15pages-lo54.odt"]);
    const p = await settled((zip.document as Doc).documentId);
    assert.equal(p.state, "F");
    assert.equal(p.errorCode, 2);
    const m = await settled((missing.document as Doc).documentId);
    assert.equal(m.state, "F");
    assert.equal(m.errorCode, 1);
    const t = (await server.services.store.documents.getForConversion((typed.document as Doc).documentId))!;
    await settled(t.documentId);
    assert.equal((await server.services.store.documents.getForConversion(t.documentId))!.orgDocType, "pdf");
  });

  test("no conversion leaves files in the scratch folder", async () => {
    // a document shows its final state just before its job cleans up: wait for the queue to be idle
    for (let i = 0; i < 100; i++) {
      const busy = await dbOf(server.services.store).selectFrom("jobs").select("id").where("state", "in", ["queued", "running"]).execute();
      if (busy.length === 0) break;
      await sleep(100);
    }
    const left = (await readdir(server.config.tmpDir)).filter((f) => f.startsWith("convert-"));
    assert.deepEqual(left, []);
  });
});
