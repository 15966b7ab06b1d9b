import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, writeFile, open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateRawSync } from "node:zlib";
import { isOrgDocType } from "../src/domain/formats.ts";
import { detectFormat } from "../src/convert/detect-format.ts";
import { zipOf } from "./helpers/zip-writer.ts";

const FIXTURES = fileURLToPath(new URL("../../shared/fixtures/", import.meta.url));
const BAD = join(FIXTURES, "bad");

/** Hostile inputs must be classified fast; anything slower suggests an unbounded loop or read. */
async function detectQuickly(path: string): Promise<ReturnType<typeof detectFormat>> {
  const started = performance.now();
  const result = await detectFormat(path);
  assert.ok(performance.now() - started < 2000, `detectFormat(${path}) took too long`);
  return result;
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "quire-detect-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// --- zip builder: just enough of PKWARE's format for yauzl; sizes may be forged on purpose ---

interface ZipItem {
  name: string;
  data: Buffer;
  deflate?: boolean;
  /** Lie about the inflated size in the headers (zip-bomb style). */
  declaredSize?: number;
}

function buildZip(items: ZipItem[]): Buffer {
  return zipOf(
    items.map((item) => ({
      name: item.name,
      method: item.deflate ? 8 : 0,
      body: item.deflate ? deflateRawSync(item.data) : item.data,
      crc: crc32(item.data),
      size: item.declaredSize ?? item.data.length,
    })),
  );
}

const ODT_MIME = "application/vnd.oasis.opendocument.text";

function manifestXml(rootType: string, padding = 0): Buffer {
  return Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest="http://openoffice.org/2001/manifest">\n' +
      " ".repeat(padding) +
      ' <manifest:file-entry manifest:media-type="text/xml" manifest:full-path="content.xml"/>\n' +
      ` <manifest:file-entry manifest:media-type="${rootType}" manifest:full-path="/"/>\n</manifest:manifest>\n`,
  );
}

// --- OLE builder: 512-byte sectors, sector 0 = FAT, directory from sector 1 ---

const FREESECT = 0xffffffff;
const ENDOFCHAIN = 0xfffffffe;
const FATSECT = 0xfffffffd;

interface OleDirEntry {
  name: string;
  type: 1 | 2 | 5;
  left?: number;
  right?: number;
  child?: number;
}

function buildOle(entries: OleDirEntry[], fatTail: number[]): Buffer {
  const header = Buffer.alloc(512);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(header, 0);
  header.writeUInt16LE(0x3e, 0x18);
  header.writeUInt16LE(3, 0x1a);
  header.writeUInt16LE(0xfffe, 0x1c);
  header.writeUInt16LE(9, 0x1e);
  header.writeUInt16LE(6, 0x20);
  header.writeUInt32LE(1, 0x2c);
  header.writeUInt32LE(1, 0x30);
  header.writeUInt32LE(0x1000, 0x38);
  header.writeUInt32LE(ENDOFCHAIN, 0x3c);
  header.writeUInt32LE(ENDOFCHAIN, 0x44);
  for (let i = 0; i < 109; i++) header.writeUInt32LE(i === 0 ? 0 : FREESECT, 0x4c + i * 4);

  const fat = Buffer.alloc(512, 0xff);
  [FATSECT, ...fatTail].forEach((v, i) => fat.writeUInt32LE(v, i * 4));

  const dirSectors = Math.max(1, Math.ceil(entries.length / 4));
  const dir = Buffer.alloc(512 * dirSectors);
  entries.forEach((e, i) => {
    const raw = dir.subarray(i * 128, i * 128 + 128);
    const name = Buffer.from(`${e.name}\0`, "utf16le");
    name.copy(raw, 0);
    raw.writeUInt16LE(name.length, 0x40);
    raw[0x42] = e.type;
    raw.writeUInt32LE(e.left ?? FREESECT, 0x44);
    raw.writeUInt32LE(e.right ?? FREESECT, 0x48);
    raw.writeUInt32LE(e.child ?? FREESECT, 0x4c);
  });
  return Buffer.concat([header, fat, dir]);
}

const WORD_TREE: OleDirEntry[] = [
  { name: "Root Entry", type: 5, child: 1 },
  { name: "WordDocument", type: 2 },
];

// --- fixtures ---

test("every top-level fixture is detected as its extension", async () => {
  const names = (await readdir(FIXTURES, { withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .filter((n) => isOrgDocType(n.slice(n.lastIndexOf(".") + 1)));
  assert.ok(names.length >= 9, "fixtures folder looks empty");
  for (const name of names) {
    const ext = name.slice(name.lastIndexOf(".") + 1);
    assert.equal(await detectFormat(join(FIXTURES, name)), ext, name);
  }
});

test("bad/ fixtures that are not one of the nine formats give null", async () => {
  for (const name of [
    "empty.pdf",
    "text-not-zip.odt",
    "scan-page.png",
    "hello.zip",
    "ibm-displaywrite-named.doc",
    "doc-random-bytes-corrupted.doc",
    "odp-corrupt-zip.odp",
  ]) {
    assert.equal(await detectQuickly(join(BAD, name)), null, name);
  }
});

test("bad/ fixtures that are damaged, encrypted or misnamed keep their real type", async () => {
  const expected: Record<string, string> = {
    "wordperfect51-named.doc": "wpd",
    "word-encrypted-cryptoapi.doc": "doc",
    "ppt-encrypted.ppt": "ppt",
    "odt-encrypted.odt": "odt",
    "odp-libreoffice-hangs.odp": "odp",
  };
  for (const name of (await readdir(BAD)).filter((n) => n.startsWith("pdf-") && n.endsWith(".pdf"))) {
    expected[name] = "pdf";
  }
  assert.ok(Object.keys(expected).length > 5, "no bad/pdf-* fixtures found");
  for (const [name, type] of Object.entries(expected)) {
    assert.equal(await detectQuickly(join(BAD, name)), type, name);
  }
});

test("a missing file rejects rather than passing for 'unsupported'", async () => {
  await assert.rejects(detectFormat(join(FIXTURES, "no-such-file.pdf")), { code: "ENOENT" });
});

// --- generated inputs ---

test("small generated inputs", async () => {
  await withTempDir(async (dir) => {
    const cases: [string, Buffer, string | null][] = [
      ["three-bytes", Buffer.from("%PD"), null],
      ["pdf-at-1000", Buffer.concat([Buffer.alloc(1000, 0x20), Buffer.from("%PDF-1.4\n")]), "pdf"],
      ["pdf-at-1100", Buffer.concat([Buffer.alloc(1100, 0x20), Buffer.from("%PDF-1.4\n")]), null],
      ["rtf-bom-space", Buffer.from("\uFEFF \r\n{\\rtf1\\ansi}"), "rtf"],
      ["word1", Buffer.from([0x9b, 0xa5, 0x21, 0x00]), "doc"],
      ["wpc-graphic", Buffer.from([0xff, 0x57, 0x50, 0x43, 16, 0, 0, 0, 1, 0x16, 1, 0, 0, 0, 0, 0]), null],
      ["wpc-truncated", Buffer.from([0xff, 0x57, 0x50, 0x43]), null],
      ["ole-magic-only", Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), null],
      ["zip-magic-only", Buffer.from("PK\x03\x04garbage"), null],
    ];
    for (const [name, bytes, expected] of cases) {
      await writeFile(join(dir, name), bytes);
      assert.equal(await detectQuickly(join(dir, name)), expected, name);
    }
  });
});

test("generated zips: the builder is valid, and only ODF media types count", async () => {
  await withTempDir(async (dir) => {
    const cases: [string, ZipItem[], string | null][] = [
      ["odt", [{ name: "mimetype", data: Buffer.from(ODT_MIME) }], "odt"],
      ["odt-deflated-mimetype", [{ name: "mimetype", data: Buffer.from(ODT_MIME), deflate: true }], "odt"],
      ["ott-template", [{ name: "mimetype", data: Buffer.from(`${ODT_MIME}-template`) }], null],
      ["ooo10-manifest-only", [{ name: "META-INF/manifest.xml", data: manifestXml("application/vnd.sun.xml.impress"), deflate: true }], "sxi"],
      ["ooo10-calc", [{ name: "META-INF/manifest.xml", data: manifestXml("application/vnd.sun.xml.calc") }], null],
      ["ooxml", [{ name: "[Content_Types].xml", data: Buffer.from("<Types/>") }, { name: "word/document.xml", data: Buffer.from("<w/>") }], null],
      ["stored-pdf", [{ name: "a.pdf", data: Buffer.from("%PDF-1.4\n%%EOF\n") }], null],
    ];
    for (const [name, items, expected] of cases) {
      await writeFile(join(dir, name), buildZip(items));
      assert.equal(await detectQuickly(join(dir, name)), expected, name);
    }
  });
});

test("zip bombs in mimetype or manifest are capped, not inflated", async () => {
  await withTempDir(async (dir) => {
    // 64 MiB of the right media type followed by padding: deflates to ~64 KiB.
    const blob = Buffer.alloc(64 * 1024 * 1024, 0x20);
    Buffer.from(ODT_MIME).copy(blob);
    const cases: [string, ZipItem[]][] = [
      ["honest-size", [{ name: "mimetype", data: blob, deflate: true }]],
      ["lying-size", [{ name: "mimetype", data: blob, deflate: true, declaredSize: ODT_MIME.length }]],
      ["manifest-bomb", [{ name: "META-INF/manifest.xml", data: manifestXml("application/vnd.sun.xml.writer", 2 * 1024 * 1024), deflate: true, declaredSize: 500 }]],
    ];
    for (const [name, items] of cases) {
      await writeFile(join(dir, name), buildZip(items));
      const before = process.memoryUsage().rss;
      assert.equal(await detectQuickly(join(dir, name)), null, name);
      assert.ok(process.memoryUsage().rss - before < 32 * 1024 * 1024, `${name} inflated too much`);
    }
  });
});

test("generated OLE files: only a root-level WordDocument / PowerPoint Document / PP40 counts", async () => {
  await withTempDir(async (dir) => {
    const cases: [string, Buffer, string | null][] = [
      ["word", buildOle(WORD_TREE, [ENDOFCHAIN]), "doc"],
      ["word-lowercase", buildOle([WORD_TREE[0]!, { name: "worddocument", type: 2 }], [ENDOFCHAIN]), "doc"],
      ["ppt-right-sibling", buildOle([
        { name: "Root Entry", type: 5, child: 1 },
        { name: "Current User", type: 2, right: 2 },
        { name: "PowerPoint Document", type: 2 },
      ], [ENDOFCHAIN]), "ppt"],
      // PowerPoint 4.0 has no `PowerPoint Document` stream: its presentation is the `PP40` stream.
      ["powerpoint4", buildOle([{ name: "Root Entry", type: 5, child: 1 }, { name: "PP40", type: 2 }], [ENDOFCHAIN]), "ppt"],
      ["excel", buildOle([{ name: "Root Entry", type: 5, child: 1 }, { name: "Workbook", type: 2 }], [ENDOFCHAIN]), null],
      ["excel-embedding-word", buildOle([
        { name: "Root Entry", type: 5, child: 1 },
        { name: "Workbook", type: 2, right: 2 },
        { name: "MBD0001", type: 1, child: 3 },
        { name: "WordDocument", type: 2 },
      ], [ENDOFCHAIN]), null],
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
    ];
    for (const [name, bytes, expected] of cases) {
      await writeFile(join(dir, name), bytes);
      assert.equal(await detectQuickly(join(dir, name)), expected, name);
    }
  });
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
    assert.equal(await detectQuickly(path), null);
  });
});

test("a real .doc cut after its 512-byte header is null", async () => {
  await withTempDir(async (dir) => {
    const source = await open(join(FIXTURES, "word97-2pages-tika.doc"), "r");
    const head = Buffer.alloc(512);
    try {
      await source.read(head, 0, 512, 0);
    } finally {
      await source.close();
    }
    await writeFile(join(dir, "truncated.doc"), head);
    assert.equal(await detectQuickly(join(dir, "truncated.doc")), null);
  });
});

test("a large random file is rejected without reading it all", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "sparse.bin");
    const handle = await open(path, "w");
    try {
      await handle.truncate(100 * 1024 * 1024); // sparse: 100 MiB of zeros costs no disk
    } finally {
      await handle.close();
    }
    assert.equal(await detectQuickly(path), null);
  });
});
