import { test } from "node:test";
import assert from "node:assert/strict";
import { open, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { detectFile, detectFormat } from "../../src/detect/detect-format.ts";
import { decode } from "../../src/detect/text.ts";
import { expectation, expectCases, withTempDir, type Expected } from "../helpers/detect-cases.ts";
import { buildOle, ENDOFCHAIN, oleWithStream, type OleDirEntry } from "../helpers/ole-writer.ts";
import { FIXTURES } from "../helpers/paths.ts";

/** Detection only (fast): every fixture file, then generated and hostile inputs. Zip packages: detect-format-zip.test.ts. */

const BAD = join(FIXTURES, "bad");

/** The good documents' formats, as the MANIFEST's tables give them (so the two cannot drift apart). */
async function manifestFormats(): Promise<Map<string, string>> {
  const text = await readFile(join(FIXTURES, "MANIFEST.md"), "utf8");
  const formats = new Map<string, string>();
  // The first row naming a file is its document row (later tables, OCR and checksums, list other columns).
  for (const m of text.matchAll(/^\| `([^`/]+)` \| (\w+) \|/gm)) if (!formats.has(m[1]!)) formats.set(m[1]!, m[2]!);
  return formats;
}

/**
 * Every problem file and what detection makes of it (decided with the MANIFEST's notes). Null is
 * "not a supported format": the upload answers 201 on `file` and stores nothing. A type means the
 * upload is accepted and the conversion decides (encrypted files end in F with code 4, and so on).
 */
const BAD_EXPECTED: Record<string, Expected> = {
  "doc-random-bytes-corrupted.doc": null, // random bytes: binary junk is not text
  "docx-encrypted-password-pass.docx": { type: "docx", encrypted: true },
  "docx-truncated-tika.docx": null, // a zip with no central directory: nothing can read it
  "empty.pdf": null,
  "gif-decompression-bomb-pillow.gif": "gif", // a valid header; the pixel limit stops it in conversion
  "hello.zip": null,
  "ibm-displaywrite-named.doc": null, // a format LibreOffice cannot import
  "jpg-truncated-pillow.jpg": "jpg", // cut at the end, not in the header
  "odp-corrupt-zip.odp": null, // its mimetype entry cannot be inflated
  "odp-libreoffice-hangs.odp": "odp",
  "odt-encrypted.odt": { type: "odt", encrypted: true },
  "pdf-352-pages-freeculture.pdf": "pdf",
  "pdf-corrupt-no-trailer.pdf": "pdf",
  "pdf-encrypted-user-password.pdf": "pdf",
  "pdf-enormous-page-81mpx-ocrmypdf.pdf": "pdf",
  "pdf-invalid-xref-entry-renders.pdf": "pdf",
  "pdf-junk-header-missing-startxref.pdf": "pdf",
  "pdf-truncated-half.pdf": "pdf",
  "ppt-encrypted.ppt": "ppt",
  "pptx-corrupted-alfresco.pptx": null, // random bytes
  "scan-page.png": "png", // an image: a format of its own now
  "text-not-zip.odt": "txt", // plain text named .odt: it is a text file
  "word-encrypted-cryptoapi.doc": "doc",
  "wordperfect51-named.doc": "wpd",
  "xls-encrypted-xor-abc.xls": "xls",
  "xlsx-encrypted-password-pwd123.xlsx": { type: "xlsx", encrypted: true },
};

// --- the fixtures ---

test("every good fixture is detected as the format its MANIFEST row gives", async () => {
  const formats = await manifestFormats();
  const files = (await readdir(FIXTURES, { withFileTypes: true })).filter((d) => d.isFile() && d.name !== "MANIFEST.md").map((d) => d.name);
  const documents = files.filter((f) => !f.endsWith(".gt.txt"));
  assert.ok(documents.length >= 80, "fixtures folder looks incomplete");
  for (const name of documents) {
    const format = formats.get(name);
    assert.ok(format, `${name} has no MANIFEST row`);
    assert.deepEqual(await detectFile(join(FIXTURES, name), { fileName: name }), { type: format, encrypted: false }, name);
  }
  // The OCR ground-truth files are UTF-8 text: they would be accepted as txt.
  for (const name of files.filter((f) => f.endsWith(".gt.txt"))) assert.equal(await detectFormat(join(FIXTURES, name)), "txt", name);
});

test("every bad/ fixture gives its decided outcome, and the table covers the folder", async () => {
  assert.deepEqual((await readdir(BAD)).sort(), Object.keys(BAD_EXPECTED).sort());
  for (const [name, want] of Object.entries(BAD_EXPECTED)) {
    assert.deepEqual(await detectFile(join(BAD, name), { fileName: name }), expectation(want), name);
  }
});

test("the content decides, not the name: fixtures renamed keep their type", async () => {
  for (const name of ["docx-macword2011-poi.docx", "xls-excel95-poi.xls", "img-photo-tika.webp", "txt-utf16le-bom-xapian.txt"]) {
    const type = (await detectFile(join(FIXTURES, name)))?.type;
    assert.equal((await detectFile(join(FIXTURES, name), { fileName: "renamed.pdf" }))?.type, type, name);
  }
});

test("an encrypted OOXML package takes its family from the upload's name, else docx", async () => {
  const path = join(BAD, "xlsx-encrypted-password-pwd123.xlsx");
  const cases: Array<[string | undefined, string]> = [
    ["book.xlsx", "xlsx"], ["book.XLSM", "xlsx"], ["deck.pptx", "pptx"], ["show.ppsx", "pptx"], ["letter.dotx", "docx"],
    ["scan.pdf", "docx"], ["noextension", "docx"], [undefined, "docx"],
  ];
  for (const [fileName, type] of cases) assert.deepEqual(await detectFile(path, { fileName }), { type, encrypted: true }, String(fileName));
});

test("a missing file rejects rather than passing for 'unsupported'", async () => {
  await assert.rejects(detectFormat(join(FIXTURES, "no-such-file.pdf")), { code: "ENOENT" });
});

// --- generated: magic numbers and cut headers ---

const bytes = (...parts: Array<string | number[]>): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));
const u32le = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];

test("magic numbers: whole headers are recognised, cut ones are nothing", async () => {
  const pngIhdr = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13], "IHDR", [0, 0, 0, 10, 0, 0, 0, 10, 8, 2, 0, 0, 0, 1, 2, 3, 4]);
  const bmp = bytes("BM", u32le(70), [0, 0, 0, 0], u32le(54), u32le(40), u32le(1), u32le(1), [1, 0, 24, 0], Buffer.alloc(24).toString("latin1"));
  await expectCases([
    ["three-bytes", bytes("%PD"), "txt"],
    ["pdf-at-1000", Buffer.concat([Buffer.alloc(1000, 0x20), bytes("%PDF-1.4\n")]), "pdf"],
    ["pdf-at-1100", Buffer.concat([Buffer.alloc(1100, 0x20), bytes("%PDF-1.4\n")]), "txt"],
    ["rtf-bom-space", Buffer.from("\uFEFF \r\n{\\rtf1\\ansi}"), "rtf"],
    ["word1", bytes([0x9b, 0xa5, 0x21, 0x00]), "doc"],
    ["mac-word5", bytes([0xfe, 0x37, 0x00, 0x23], Buffer.alloc(60).toString("latin1")), "doc"],
    ["excel4-worksheet", bytes([0x09, 0x04, 0x06, 0x00, 0x00, 0x00, 0x10, 0x00, 0, 0]), "xls"],
    ["excel4-chart", bytes([0x09, 0x04, 0x06, 0x00, 0x00, 0x00, 0x20, 0x00, 0, 0]), null],
    ["wpc-document", bytes([0xff, 0x57, 0x50, 0x43, 16, 0, 0, 0, 1, 0x0a, 2, 1, 0, 0, 0, 0]), "wpd"],
    ["wpc-graphic", bytes([0xff, 0x57, 0x50, 0x43, 16, 0, 0, 0, 1, 0x16, 1, 0, 0, 0, 0, 0]), null],
    ["wpc-truncated", bytes([0xff, 0x57, 0x50, 0x43]), null],
    ["ole-magic-only", bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), null],
    ["zip-magic-only", bytes("PK\x03\x04garbage"), null],
    ["jpeg", bytes([0xff, 0xd8, 0xff, 0xe0, 0, 16], "JFIF"), "jpg"],
    ["jpeg-cut", bytes([0xff, 0xd8, 0xff]), null],
    ["png", pngIhdr, "png"],
    ["png-cut-in-ihdr", pngIhdr.subarray(0, 20), null],
    ["png-signature-only", pngIhdr.subarray(0, 8), null],
    ["png-zero-width", Buffer.concat([pngIhdr.subarray(0, 16), Buffer.alloc(4), pngIhdr.subarray(20)]), null],
    ["gif", bytes("GIF89a", [1, 0, 1, 0, 0, 0, 0]), "gif"],
    ["gif-cut", bytes("GIF89a", [1, 0]), null],
    ["tiff-le", bytes("II", [42, 0], u32le(8), [0, 0]), "tif"],
    ["tiff-be", bytes("MM", [0, 42, 0, 0, 0, 8, 0, 0]), "tif"],
    ["tiff-ifd-outside", bytes("II", [42, 0], u32le(4096), [0, 0]), null],
    ["tiff-cut", bytes("II", [42, 0]), null],
    ["bigtiff", bytes("II", [43, 0, 8, 0, 0, 0], [16, 0, 0, 0, 0, 0, 0, 0], Buffer.alloc(16).toString("latin1")), "tif"],
    ["bmp", bmp, "bmp"],
    ["bmp-cut", bmp.subarray(0, 14), null],
    ["bm-text", Buffer.from("BM is what the plant manager wrote in the margin of the report.\n"), "txt"],
    ["webp", bytes("RIFF", u32le(100), "WEBPVP8 ", u32le(80)), "webp"],
    ["riff-wave", bytes("RIFF", u32le(100), "WAVEfmt ", u32le(16)), null],
    ["webp-cut", bytes("RIFF", u32le(100), "WEB"), null],
  ]);
});

// --- generated: text ---

test("text: UTF-8, UTF-16 with a BOM and Windows-1252 are txt; binary junk, NULs and emptiness are not", async () => {
  const prose = "Quire publishes documents. Voilà: naïve café, Straße, Ελληνικά, 日本語.\n".repeat(20);
  const latin1 = Buffer.from("Le cœur a ses raisons, déjà vu, ça va.\r\n".repeat(10), "latin1");
  const withControls = (count: number): Buffer => {
    const buf = Buffer.from("x".repeat(1000));
    for (let i = 0; i < count; i++) buf[i * 50] = 0x01;
    return buf;
  };
  const sixtyFourKiB = 64 * 1024;
  // A long UTF-8 file whose 64 KiB sample ends inside a two-byte character: not a decoding error.
  const longUtf8 = Buffer.concat([Buffer.alloc(sixtyFourKiB - 1, 0x61), Buffer.from("é and more text\n")]);
  await expectCases([
    ["utf8", Buffer.from(prose), "txt"],
    ["utf8-bom", Buffer.concat([bytes([0xef, 0xbb, 0xbf]), Buffer.from(prose)]), "txt"],
    ["utf16le-bom", Buffer.concat([bytes([0xff, 0xfe]), Buffer.from(prose, "utf16le")]), "txt"],
    ["utf16be-bom", Buffer.concat([bytes([0xfe, 0xff]), Buffer.from(prose, "utf16le").swap16()]), "txt"],
    ["windows-1252", Buffer.concat([latin1, bytes([0x80, 0x20, 0x93, 0x94])]), "txt"],
    ["long-utf8-cut-sample", longUtf8, "txt"],
    ["utf16le-no-bom", Buffer.from(prose, "utf16le"), null],
    ["utf16le-bom-lone-surrogate", Buffer.concat([bytes([0xff, 0xfe]), Buffer.from("ab", "utf16le"), bytes([0x00, 0xd8, 0x41, 0x00])]), null],
    ["utf16-bom-with-nul-chars", Buffer.concat([bytes([0xff, 0xfe]), Buffer.from("a\0b\0c", "utf16le")]), null],
    ["utf8-bom-invalid", Buffer.concat([bytes([0xef, 0xbb, 0xbf]), Buffer.from("abc"), bytes([0xc3, 0x28])]), null],
    ["nul-in-text", Buffer.from("hello\0world"), null],
    ["ten-controls-per-thousand", withControls(10), "txt"],
    ["twenty-controls-per-thousand", withControls(20), null],
    ["whitespace-only", Buffer.from("  \r\n\t\n   \f"), null],
    ["bom-only", bytes([0xef, 0xbb, 0xbf]), null],
    ["cyrillic-code-page", Buffer.from(Array.from({ length: 400 }, (_, i) => (i % 7 === 0 ? 0x20 : 0xc0 + (i % 32)))), null],
    ["text-then-binary-junk", Buffer.concat([Buffer.from(prose), Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) % 256))]), null],
  ]);
});

test("Windows-1252 decodes its own characters at 0x80-0x9F, not ISO-8859-1's controls", () => {
  assert.equal(decode(Buffer.from([0x80, 0x20, 0x93, 0x61, 0x94, 0x20, 0x8a, 0x9f, 0xe9, 0xff]), "windows-1252"), "€ “a” ŠŸéÿ");
  assert.equal(decode(Buffer.from([0x81, 0x8d]), "windows-1252"), "\u0081\u008d", "unassigned positions stay controls");
});

test("flat OpenDocument XML is its document type, other XML is text", async () => {
  const flat = (mime: string): Buffer =>
    Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" office:version="1.3" office:mimetype="${mime}"><office:body/></office:document>\n`);
  await expectCases([
    ["fodt", flat("application/vnd.oasis.opendocument.text"), "odt"],
    ["fods", flat("application/vnd.oasis.opendocument.spreadsheet"), "ods"],
    ["fodg", flat("application/vnd.oasis.opendocument.graphics"), "odg"],
    ["flat-chart", flat("application/vnd.oasis.opendocument.chart"), "txt"],
    ["plain-xml", Buffer.from('<?xml version="1.0"?>\n<note><to>Tove</to></note>\n'), "txt"],
  ]);
});

// --- generated: compound files (OLE2) ---

const WORD_TREE: OleDirEntry[] = [{ name: "Root Entry", type: 5, child: 1 }, { name: "WordDocument", type: 2 }];

test("generated OLE files: only root-level document streams count", async () => {
  await expectCases([
    ["word", buildOle(WORD_TREE, [ENDOFCHAIN]), "doc"],
    ["word-lowercase", oleWithStream("worddocument"), "doc"],
    ["ppt-right-sibling", buildOle([
      { name: "Root Entry", type: 5, child: 1 },
      { name: "Current User", type: 2, right: 2 },
      { name: "PowerPoint Document", type: 2 },
    ], [ENDOFCHAIN]), "ppt"],
    ["powerpoint4", oleWithStream("PP40"), "ppt"],
    ["excel97", oleWithStream("Workbook"), "xls"],
    ["excel95", oleWithStream("Book"), "xls"],
    ["encrypted-ooxml", buildOle([
      { name: "Root Entry", type: 5, child: 1 },
      { name: "EncryptionInfo", type: 2, right: 2 },
      { name: "EncryptedPackage", type: 2 },
    ], [ENDOFCHAIN]), { type: "docx", encrypted: true }],
    ["encrypted.pptx", oleWithStream("EncryptedPackage"), { type: "pptx", encrypted: true }],
    ["excel-embedding-word", buildOle([
      { name: "Root Entry", type: 5, child: 1 },
      { name: "Workbook", type: 2, right: 2 },
      { name: "MBD0001", type: 1, child: 3 },
      { name: "WordDocument", type: 2 },
    ], [ENDOFCHAIN]), "xls"],
    ["only-nested-word", buildOle([
      { name: "Root Entry", type: 5, child: 1 },
      { name: "ObjectPool", type: 1, child: 2 },
      { name: "WordDocument", type: 2 },
    ], [ENDOFCHAIN]), null],
    ["other-ole", oleWithStream("Contents"), null], // e.g. a Works or Visio file
    ["word-storage-not-stream", buildOle([WORD_TREE[0]!, { name: "WordDocument", type: 1 }], [ENDOFCHAIN]), null],
    ["sibling-cycle", buildOle([
      { name: "Root Entry", type: 5, child: 1 },
      { name: "A", type: 2, left: 2 },
      { name: "B", type: 2, left: 1, right: 1 },
    ], [ENDOFCHAIN]), null],
    // The directory chain points back at itself: corrupt, so null even though the entry is there.
    ["fat-self-loop", buildOle(WORD_TREE, [1]), null],
    ["fat-self-loop-excel", buildOle([{ name: "Root Entry", type: 5, child: 1 }, { name: "Workbook", type: 2 }], [1]), null],
    // Directory chain runs past the end of the file.
    ["fat-points-outside", buildOle(WORD_TREE, [5000]), null],
  ]);
});

test("OLE with a looping DIFAT chain and forged counts terminates", async () => {
  await withTempDir(async (dir) => {
    const ole = buildOle(WORD_TREE, [ENDOFCHAIN]);
    ole.writeUInt32LE(0xffffff, 0x2c); // FAT sector count
    ole.writeUInt32LE(2, 0x44); // first DIFAT sector: sector 2, appended below
    ole.writeUInt32LE(0xfffffff0, 0x48); // DIFAT sector count
    const difat = Buffer.alloc(512, 0xff);
    difat.writeUInt32LE(2, 508); // ...which links back to itself
    // Padded to 32 MiB: big enough that the header's 109 FAT ids plus one DIFAT sector cannot cover it.
    const path = join(dir, "difat-loop");
    await writeFile(path, Buffer.concat([ole, difat]));
    const handle = await open(path, "r+");
    try {
      await handle.truncate(32 * 1024 * 1024);
    } finally {
      await handle.close();
    }
    assert.equal(await detectFormat(path), null);
  });
});

test("a real .doc cut after its 512-byte header is null", async () => {
  const head = (await readFile(join(FIXTURES, "word97-2pages-tika.doc"))).subarray(0, 512);
  await expectCases([["truncated.doc", head, null]]);
});

test("a large file of zeros is rejected without reading it all", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "sparse.bin");
    const handle = await open(path, "w");
    try {
      await handle.truncate(100 * 1024 * 1024); // sparse: 100 MiB of zeros costs no disk
    } finally {
      await handle.close();
    }
    assert.equal(await detectFormat(path), null);
  });
});
