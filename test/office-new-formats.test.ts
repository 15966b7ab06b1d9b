import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConversionError } from "../src/convert/conversion-error.ts";
import { OfficeConverter } from "../src/convert/office-to-pdf.ts";
import { detectFile } from "../src/detect/detect-format.ts";
import { conversionRoute } from "../src/domain/formats.ts";
import { FIXTURES } from "./helpers/paths.ts";

/**
 * The office formats added beyond the nine (docx, pptx, xlsx, xls, ods, odg) go through the same
 * warm LibreOffice slots as the others: LibreOffice finds the filter from the content, as the
 * conversion job hands it the original under the name `original`, with no extension.
 */

const SLOW = { timeout: 240_000 };
/** "Pages (observed)" in the MANIFEST; the same with the fonts scripts/install-system-deps.sh installs. */
const PAGES: Record<string, number> = {
  "docx-libreoffice53-tika.docx": 2, "docx-macword2011-poi.docx": 1, "docx-outlook2007-5pages-poi.docx": 5,
  "docx-word2013-3pages-numbered-tika.docx": 3, "docx-word2016-15pages-russian-poi.docx": 15,
  "pptx-libreoffice53-poi.pptx": 1, "pptx-macppt2016-table-poi.pptx": 1, "pptx-ppt2007-3slides-tika.pptx": 3, "pptx-ppt2010-10slides-layouts-poi.pptx": 10,
  "xlsx-excel2007-tika.xlsx": 1, "xlsx-excelonline-rtl-poi.xlsx": 2, "xlsx-libreoffice72-2sheets-xapian.xlsx": 2,
  "xlsx-macexcel2011-headerfooter-poi.xlsx": 1, "xlsx-wps-poi.xlsx": 2,
  "xls-excel95-poi.xls": 1, "xls-excel97-tika.xls": 1, "xls-macexcel-poi.xls": 1, "xls-multipage-jodconverter.xls": 3,
  "ods-libreoffice42-poi.ods": 2, "ods-libreoffice63-xapian.ods": 1, "ods-ooo24-jodconverter.ods": 1,
  "odg-libreoffice62-multipage-jodconverter.odg": 3, "odg-libreoffice73-odf13-tika.odg": 1, "odg-ooo24-jodconverter.odg": 1,
};

let workDir: string;
let office: OfficeConverter;
before(async () => {
  workDir = await mkdtemp(join(tmpdir(), "quire-office-new-"));
  office = new OfficeConverter({ workDir: join(workDir, "office"), slots: 1, timeoutMs: 60_000 });
  await office.start();
});
after(async () => {
  await office?.close();
  await rm(workDir, { recursive: true, force: true });
});

/** As the job does it: the original under a name that says nothing. */
async function convertAsJob(fixture: string): Promise<string> {
  const dir = await mkdtemp(join(workDir, "job-"));
  await copyFile(join(FIXTURES, fixture), join(dir, "original"));
  await office.convert(join(dir, "original"), join(dir, "document.pdf"));
  return join(dir, "document.pdf");
}

test("every new office fixture is routed to LibreOffice and converts with its page count", SLOW, async () => {
  const names = (await readdir(FIXTURES)).filter((f) => /\.(docx|pptx|xlsx|xls|ods|odg)$/.test(f));
  assert.deepEqual(names.sort(), Object.keys(PAGES).sort(), "the table covers the fixtures");
  const failures: string[] = [];
  for (const name of names) {
    const detected = await detectFile(join(FIXTURES, name));
    assert.ok(detected && conversionRoute(detected.type) === "office", `${name} goes the office way`);
    const pages = Number(/^Pages:\s+(\d+)/m.exec(execFileSync("pdfinfo", [await convertAsJob(name)], { encoding: "utf8" }))?.[1]);
    if (pages !== PAGES[name]) failures.push(`${name}: ${pages} pages, want ${PAGES[name]}`);
  }
  assert.deepEqual(failures, []);
});

test("password-protected spreadsheets fail as encrypted (errorCode 4)", SLOW, async () => {
  for (const name of ["bad/xlsx-encrypted-password-pwd123.xlsx", "bad/xls-encrypted-xor-abc.xls"]) {
    const err = await convertAsJob(name).then(() => assert.fail(`${name} should not convert`), (e: unknown) => e);
    assert.ok(err instanceof ConversionError, String(err));
    assert.equal(err.kind, "encrypted", `${name}: ${err.message}`);
  }
});

test("the encrypted docx fixture fails to convert, and detection flags it as encrypted", SLOW, async () => {
  // LibreOffice answers this one (agile encryption, no password prompt) as unreadable, not as
  // locked: OfficeConverter needs detection's flag to report it as code 4 (see the report of this change).
  const name = "bad/docx-encrypted-password-pass.docx";
  assert.deepEqual(await detectFile(join(FIXTURES, name), { fileName: "x.docx" }), { type: "docx", encrypted: true });
  const err = await convertAsJob(name).then(() => assert.fail("should not convert"), (e: unknown) => e);
  assert.ok(err instanceof ConversionError && (err.kind === "encrypted" || err.kind === "corrupt"), String(err));
});
