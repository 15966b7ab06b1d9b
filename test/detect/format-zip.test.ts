import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32, deflateRawSync } from "node:zlib";
import { detectFormat } from "../../src/detect/detect-format.ts";
import { expectCases, withTempDir } from "../helpers/detect-cases.ts";
import { zipOf } from "../helpers/zip-writer.ts";

/** Detection of zip packages (ODF, OpenOffice.org 1.x, OOXML), generated and hostile. */

interface ZipItem {
  name: string;
  data: Buffer | string;
  deflate?: boolean;
  /** Lie about the inflated size in the headers (zip-bomb style). */
  declaredSize?: number;
}

function buildZip(items: ZipItem[]): Buffer {
  return zipOf(
    items.map((item) => {
      const data = Buffer.from(item.data);
      return {
        name: item.name,
        method: item.deflate ? 8 : 0,
        body: item.deflate ? deflateRawSync(data) : data,
        crc: crc32(data),
        size: item.declaredSize ?? data.length,
      };
    }),
  );
}

// --- OpenDocument ---

const ODF = "application/vnd.oasis.opendocument";

function manifestXml(rootType: string, opts: { padding?: number; encrypted?: boolean } = {}): string {
  const encryption = opts.encrypted
    ? '<manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="x"><manifest:algorithm manifest:algorithm-name="Blowfish CFB" manifest:initialisation-vector="x"/></manifest:encryption-data>'
    : "";
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">\n' +
    " ".repeat(opts.padding ?? 0) +
    ` <manifest:file-entry manifest:media-type="${rootType}" manifest:full-path="/"/>\n` +
    ` <manifest:file-entry manifest:media-type="text/xml" manifest:full-path="content.xml">${encryption}</manifest:file-entry>\n</manifest:manifest>\n`
  );
}

test("ODF and OpenOffice.org 1.x packages, templates included, by their media type", async () => {
  await expectCases([
    ["odt", buildZip([{ name: "mimetype", data: `${ODF}.text` }]), "odt"],
    ["odt-deflated-mimetype", buildZip([{ name: "mimetype", data: `${ODF}.text`, deflate: true }]), "odt"],
    ["ott", buildZip([{ name: "mimetype", data: `${ODF}.text-template` }]), "odt"],
    ["ods", buildZip([{ name: "mimetype", data: `${ODF}.spreadsheet` }]), "ods"],
    ["ots", buildZip([{ name: "mimetype", data: `${ODF}.spreadsheet-template` }]), "ods"],
    ["odg", buildZip([{ name: "mimetype", data: `${ODF}.graphics` }]), "odg"],
    ["otp", buildZip([{ name: "mimetype", data: `${ODF}.presentation-template` }]), "odp"],
    ["odf-chart", buildZip([{ name: "mimetype", data: `${ODF}.chart` }]), null],
    ["odt-encrypted", buildZip([{ name: "mimetype", data: `${ODF}.text` }, { name: "META-INF/manifest.xml", data: manifestXml(`${ODF}.text`, { encrypted: true }) }]), { type: "odt", encrypted: true }],
    ["mimetype-wins-over-manifest", buildZip([{ name: "mimetype", data: `${ODF}.graphics` }, { name: "META-INF/manifest.xml", data: manifestXml(`${ODF}.text`) }]), "odg"],
    ["ooo10-manifest-only", buildZip([{ name: "META-INF/manifest.xml", data: manifestXml("application/vnd.sun.xml.impress"), deflate: true }]), "sxi"],
    ["ooo10-writer-template", buildZip([{ name: "META-INF/manifest.xml", data: manifestXml("application/vnd.sun.xml.writer.template") }]), "sxw"],
    ["ooo10-calc", buildZip([{ name: "META-INF/manifest.xml", data: manifestXml("application/vnd.sun.xml.calc") }]), null],
    ["stored-pdf", buildZip([{ name: "a.pdf", data: "%PDF-1.4\n%%EOF\n" }]), null],
    ["plain-zip-of-text", buildZip([{ name: "hello.txt", data: "hello" }]), null],
  ]);
});

// --- Office Open XML ---

const OPC_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";
const STRICT_REL = "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument";

function rels(target: string, opts: { type?: string; external?: boolean } = {}): string {
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>' +
    `<Relationship Id="rId1" Type="${opts.type ?? OPC_REL}" Target="${target}"${opts.external ? ' TargetMode="External"' : ""}/></Relationships>`
  );
}

function contentTypes(part: string, contentType: string, padding = 0): string {
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
    " ".repeat(padding) +
    `<Override PartName="${part}" ContentType="${contentType}"/></Types>`
  );
}

/** A minimal package: content types, package relationships, and the main part. */
function ooxml(mainPart: string, contentType: string, extra: Partial<{ rels: string; contentTypes: string; omitMain: boolean }> = {}): Buffer {
  const items: ZipItem[] = [
    { name: "[Content_Types].xml", data: extra.contentTypes ?? contentTypes(`/${mainPart}`, contentType), deflate: true },
    { name: "_rels/.rels", data: extra.rels ?? rels(mainPart), deflate: true },
  ];
  if (!extra.omitMain) items.push({ name: mainPart, data: "<document/>", deflate: true });
  return buildZip(items);
}

const WML = "application/vnd.openxmlformats-officedocument.wordprocessingml";
const PML = "application/vnd.openxmlformats-officedocument.presentationml";
const SML = "application/vnd.openxmlformats-officedocument.spreadsheetml";

test("OOXML packages and their macro-enabled, template and show variants, by the main part's content type", async () => {
  const cases: Array<[string, string, string, string]> = [
    ["docx", "word/document.xml", `${WML}.document.main+xml`, "docx"],
    ["docm", "word/document.xml", "application/vnd.ms-word.document.macroEnabled.main+xml", "docx"],
    ["dotx", "word/document.xml", `${WML}.template.main+xml`, "docx"],
    ["dotm", "word/document.xml", "application/vnd.ms-word.template.macroEnabledTemplate.main+xml", "docx"],
    ["pptx", "ppt/presentation.xml", `${PML}.presentation.main+xml`, "pptx"],
    ["pptm", "ppt/presentation.xml", "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml", "pptx"],
    ["potx", "ppt/presentation.xml", `${PML}.template.main+xml`, "pptx"],
    ["ppsx", "ppt/presentation.xml", `${PML}.slideshow.main+xml`, "pptx"],
    ["ppsm", "ppt/presentation.xml", "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml", "pptx"],
    ["xlsx", "xl/workbook.xml", `${SML}.sheet.main+xml`, "xlsx"],
    ["xlsm", "xl/workbook.xml", "application/vnd.ms-excel.sheet.macroEnabled.main+xml", "xlsx"],
    ["xltx", "xl/workbook.xml", `${SML}.template.main+xml`, "xlsx"],
    ["xltm", "xl/workbook.xml", "application/vnd.ms-excel.template.macroEnabled.main+xml", "xlsx"],
    // Named as anything: the content type decides.
    ["a-docx-named.xlsx", "word/document.xml", `${WML}.document.main+xml`, "docx"],
    ["main-part-elsewhere", "content/doc1.xml", `${WML}.document.main+xml`, "docx"],
  ];
  await expectCases(cases.map(([name, part, type, want]) => [name, ooxml(part, type), want] as const));
  await expectCases([
    ["strict-docx", ooxml("word/document.xml", `${WML}.document.main+xml`, { rels: rels("word/document.xml", { type: STRICT_REL }) }), "docx"],
    ["absolute-target", ooxml("word/document.xml", `${WML}.document.main+xml`, { rels: rels("/word/document.xml") }), "docx"],
    ["content-type-by-default", ooxml("word/document.xml", "", {
      contentTypes: `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="${WML}.document.main+xml"/></Types>`,
    }), "docx"],
  ]);
});

test("hostile OOXML: fake or inconsistent [Content_Types].xml, odd relationships", async () => {
  const docType = `${WML}.document.main+xml`;
  await expectCases([
    // Content types promise a document the package does not hold.
    ["fake-content-types", ooxml("word/document.xml", docType, { omitMain: true }), null],
    ["content-types-alone", buildZip([{ name: "[Content_Types].xml", data: contentTypes("/word/document.xml", docType) }, { name: "word/document.xml", data: "<w/>" }]), null],
    ["rels-alone", buildZip([{ name: "_rels/.rels", data: rels("word/document.xml") }, { name: "word/document.xml", data: "<w/>" }]), null],
    ["main-part-not-a-document", ooxml("word/document.xml", "application/xml"), null],
    ["content-type-for-another-part", ooxml("word/document.xml", docType, { contentTypes: contentTypes("/word/other.xml", docType) }), null],
    ["external-target", ooxml("word/document.xml", docType, { rels: rels("word/document.xml", { external: true }) }), null],
    ["target-escapes-package", ooxml("word/document.xml", docType, { rels: rels("../../word/document.xml") }), null],
    ["xlsb-binary-workbook", ooxml("xl/workbook.bin", "application/vnd.ms-excel.sheet.binary.macroEnabled.main"), null],
    ["visio-vsdx", ooxml("visio/document.xml", "application/vnd.ms-visio.drawing.main+xml"), null],
  ]);
});

test("zip bombs in any small entry detection reads are capped, not inflated", async () => {
  // 64 MiB of text behind the right start: deflates to about 64 KiB.
  const bomb = (start: string): Buffer => {
    const blob = Buffer.alloc(64 * 1024 * 1024, 0x20);
    Buffer.from(start).copy(blob);
    return blob;
  };
  const docType = `${WML}.document.main+xml`;
  const cases: Array<[string, ZipItem[]]> = [
    ["mimetype-honest-size", [{ name: "mimetype", data: bomb(`${ODF}.text`), deflate: true }]],
    ["mimetype-lying-size", [{ name: "mimetype", data: bomb(`${ODF}.text`), deflate: true, declaredSize: 39 }]],
    ["manifest-bomb", [{ name: "META-INF/manifest.xml", data: manifestXml("application/vnd.sun.xml.writer", { padding: 2 * 1024 * 1024 }), deflate: true, declaredSize: 500 }]],
    ["content-types-bomb", [
      { name: "[Content_Types].xml", data: contentTypes("/word/document.xml", docType, 64 * 1024 * 1024), deflate: true, declaredSize: 600 },
      { name: "_rels/.rels", data: rels("word/document.xml") },
      { name: "word/document.xml", data: "<w/>" },
    ]],
    ["rels-bomb", [
      { name: "[Content_Types].xml", data: contentTypes("/word/document.xml", docType) },
      { name: "_rels/.rels", data: bomb(rels("word/document.xml")), deflate: true, declaredSize: 600 },
      { name: "word/document.xml", data: "<w/>" },
    ]],
  ];
  await withTempDir(async (dir) => {
    for (const [name, items] of cases) {
      await writeFile(join(dir, name), buildZip(items));
      const before = process.memoryUsage().rss;
      assert.equal(await detectFormat(join(dir, name)), null, name);
      assert.ok(process.memoryUsage().rss - before < 48 * 1024 * 1024, `${name} inflated too much`);
    }
  });
});

test("a zip with more entries than any document is not read to the end", async () => {
  const items: ZipItem[] = Array.from({ length: 20_001 }, (_, i) => ({ name: `f${i}`, data: "" }));
  items.push({ name: "mimetype", data: `${ODF}.text` });
  await expectCases([["many-entries", buildZip(items), null]]);
});
