import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { docTypeFromExtension, ORG_DOC_TYPES } from "../../src/domain/formats.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { failure, fields, fileField, newBlobFiles, parseRsp, postMultipart, signedUpload, type Rsp } from "../helpers/multipart.ts";

/** svc.document.upload (interface §4.2, §2.1; decisions §5): every supported format, detected by content. */

/** A fixture's type as its extension names it (.tiff is tif); the OCR ground-truth .gt.txt files are not documents. */
const typeOf = (fileName: string) => docTypeFromExtension(extname(fileName).slice(1));
const GOOD = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((e) => e.isFile() && !e.name.endsWith(".gt.txt") && typeOf(e.name) !== undefined)
  .map((e) => e.name)
  .sort();
const BAD = join(FIXTURES, "bad");

/** None of the supported formats: 201 on `file`, nothing stored. */
const REFUSED = [
  "empty.pdf", "hello.zip", "ibm-displaywrite-named.doc", "doc-random-bytes-corrupted.doc", "odp-corrupt-zip.odp",
  "docx-truncated-tika.docx", "pptx-corrupted-alfresco.pptx",
];
/** A supported format even if it will fail later (encrypted, corrupt, misnamed, too big): accepted with the detected type. */
const ACCEPTED_BAD: Record<string, string> = {
  "wordperfect51-named.doc": "wpd",
  "word-encrypted-cryptoapi.doc": "doc",
  "ppt-encrypted.ppt": "ppt",
  "odt-encrypted.odt": "odt",
  "odp-libreoffice-hangs.odp": "odp",
  "docx-encrypted-password-pass.docx": "docx",
  "xlsx-encrypted-password-pwd123.xlsx": "xlsx",
  "xls-encrypted-xor-abc.xls": "xls",
  "scan-page.png": "png",
  "text-not-zip.odt": "txt",
  "jpg-truncated-pillow.jpg": "jpg",
  "gif-decompression-bomb-pillow.gif": "gif",
  "pdf-enormous-page-81mpx-ocrmypdf.pdf": "pdf",
  "pdf-encrypted-user-password.pdf": "pdf",
  "pdf-352-pages-freeculture.pdf": "pdf",
  "pdf-invalid-xref-entry-renders.pdf": "pdf",
  "pdf-corrupt-no-trailer.pdf": "pdf",
  "pdf-junk-header-missing-startxref.pdf": "pdf",
  "pdf-truncated-half.pdf": "pdf",
};

let server: TestServer;
before(async () => (server = await startTestServer()));
after(() => server.close());

async function upload(data: Buffer, fileName: string, format: "xml" | "json", extra: Record<string, string> = {}): Promise<Rsp> {
  const params = signedUpload(server.account, format === "json" ? { ...extra, format } : extra);
  const answer = await postMultipart(`${server.uploadUrl}/1_0`, [...fields(params), fileField(data, fileName)]);
  assert.equal(answer.status, 200);
  return parseRsp(answer, format);
}

const tmpFiles = (files: string[]) => files.filter((f) => f.startsWith(".tmp/"));

/**
 * The blob folder once the request's spool clean-up has run: the server answers first and removes
 * a refused upload's spool file right after, so a spool file gets up to 2 s to disappear.
 */
async function settledBlobFiles(): Promise<string[]> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const files = await server.listBlobFiles();
    if (tmpFiles(files).length === 0 || Date.now() > deadline) return files;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Uploads `data` and checks the blob side of a success: exactly one new file, under
 * `documents/`, holding the same bytes, at a path no public value leads to; the spool is empty.
 */
async function uploadAndCheckBlob(data: Buffer, fileName: string, format: "xml" | "json", extra: Record<string, string> = {}): Promise<NonNullable<Rsp["document"]>> {
  const before = await server.listBlobFiles();
  const counts = await server.countRecords();
  const rsp = await upload(data, fileName, format, extra);
  assert.equal(rsp.stat, "ok", `${fileName}: ${JSON.stringify(rsp)}`);
  const doc = rsp.document!;
  const afterFiles = await server.listBlobFiles();
  const added = afterFiles.filter((f) => !before.includes(f));
  assert.equal(added.length, 1, `${fileName}: one blob file per upload, got ${JSON.stringify(added)}`);
  const blob = added[0]!;
  assert.match(blob, /^documents\//);
  assert.deepEqual(await readFile(join(server.config.blobDir, blob)), data, `${fileName}: stored bytes equal the upload`);
  // Values shorter than 6 characters could occur in a random key by chance.
  for (const publicValue of [doc.documentId, doc.publicationId, doc.revisionId, doc.name, doc.title, fileName]) {
    if (typeof publicValue === "string" && publicValue.length >= 6) {
      assert.ok(!blob.includes(publicValue), `blob path ${blob} contains the public value ${publicValue}`);
    }
  }
  assert.deepEqual(tmpFiles(afterFiles), [], "the .tmp spool is empty after the upload");
  assert.deepEqual(await server.countRecords(), { documents: counts.documents + 1, jobs: counts.jobs + 1 });
  return doc;
}

describe("svc.document.upload: files that are none of the supported formats", () => {
  for (const fileName of REFUSED) {
    for (const format of ["xml", "json"] as const) {
      test(`bad/${fileName} (${format}) is refused with 201 on file and stores nothing`, async () => {
        const before = await server.listBlobFiles();
        const counts = await server.countRecords();
        const rsp = await upload(await readFile(join(BAD, fileName)), fileName, format);
        assert.equal(failure(rsp), "201/file");
        assert.equal(rsp.error!.message, "Invalid field format");
        assert.deepEqual(await newBlobFiles(() => server.listBlobFiles(), before), [], "no blob file and no spool file left");
        assert.deepEqual(await server.countRecords(), counts, "no document and no job");
      });
    }
  }

  // Runs first in this file (describe order), so the store and blob folder are still empty.
  test("after all refusals nothing at all is stored: no blob file, no spool file, no record", async () => {
    assert.deepEqual(await settledBlobFiles(), []);
    assert.deepEqual(await server.countRecords(), { documents: 0, jobs: 0 });
  });

  for (const [fileName, type] of Object.entries(ACCEPTED_BAD)) {
    test(`bad/${fileName} is accepted as ${type} (it fails later, in conversion)`, async () => {
      const data = await readFile(join(BAD, fileName));
      const doc = await uploadAndCheckBlob(data, fileName, "xml");
      assert.equal(doc.orgDocType, type);
      assert.equal(doc.state, "P");
      assert.equal(doc.orgDocName, fileName);
    });
  }
});

describe("svc.document.upload: every supported fixture", () => {
  test("the fixture list covers every supported format", () => {
    assert.deepEqual([...new Set(GOOD.map(typeOf))].sort(), [...ORG_DOC_TYPES].sort());
  });

  for (const [i, fileName] of GOOD.entries()) {
    // Every fixture in XML; every other one also in JSON, so both formats see every type.
    const formats: Array<"xml" | "json"> = i % 2 === 0 ? ["xml", "json"] : ["xml"];
    for (const format of formats) {
      test(`${fileName} (${format}) is accepted as ${typeOf(fileName)}`, async () => {
        const data = await readFile(join(FIXTURES, fileName));
        const doc = await uploadAndCheckBlob(data, fileName, format);
        const ext = extname(fileName).slice(1);
        assert.equal(doc.orgDocType, typeOf(fileName));
        assert.equal(doc.state, "P");
        assert.equal(doc.origin, "apiupload");
        assert.equal(doc.orgDocName, fileName);
        assert.equal(doc.title, fileName.slice(0, -ext.length - 1));
        assert.equal(doc.username, "tester");
        assert.equal(doc.name, doc.documentId, "with no name given, name is the documentId");
        assert.match(String(doc.documentId), /^\d{12}-[0-9a-f]{32}$/);
        if (format === "json") {
          assert.equal(doc.pageCount, 0);
          assert.equal(typeof doc.ep, "number");
        } else {
          assert.equal(doc.pageCount, "0");
        }
      });
    }
  }

  test("the caller's title wins over the file name", async () => {
    const data = await readFile(join(FIXTURES, "rtf-word-tika.rtf"));
    const doc = await uploadAndCheckBlob(data, "rtf-word-tika.rtf", "json", { title: "My own title" });
    assert.equal(doc.title, "My own title");
    assert.equal(doc.orgDocName, "rtf-word-tika.rtf");
  });

  test("the format comes from the content, not the name: a PDF named x.doc is pdf", async () => {
    const data = await readFile(join(FIXTURES, "pdf-quartz-firefox-1page.pdf"));
    for (const format of ["xml", "json"] as const) {
      const doc = await uploadAndCheckBlob(data, "x.doc", format);
      assert.equal(doc.orgDocType, "pdf");
      assert.equal(doc.orgDocName, "x.doc");
      assert.equal(doc.title, "x");
    }
  });
});
