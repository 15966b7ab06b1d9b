import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConversionError } from "../../src/convert/conversion-error.ts";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { clean, textToPdf } from "../../src/convert/text-to-pdf.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { DEFAULT_SANDBOX } from "../../src/convert/sandbox.ts";

const SLOW = { timeout: 180_000 };
const OPTS = { maxBytes: 10 * 1024 * 1024 };

let workDir: string;
let office: OfficeConverter;
before(async () => {
  workDir = await mkdtemp(join(tmpdir(), "quire-text-"));
  office = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, workDir: join(workDir, "office"), slots: 1, timeoutMs: 60_000 });
  await office.start();
});
after(async () => {
  await office?.close();
  await rm(workDir, { recursive: true, force: true });
});

function pdfText(pdf: string): { pages: number; text: string } {
  const pages = Number(/^Pages:\s+(\d+)/m.exec(execFileSync("pdfinfo", [pdf], { encoding: "utf8" }))?.[1]);
  return { pages, text: execFileSync("pdftotext", ["-layout", pdf, "-"], { encoding: "utf8" }) };
}

/** Converts in a folder of its own, and checks that nothing but the PDF is left there. */
async function convert(input: string, opts = OPTS): Promise<{ pages: number; text: string }> {
  const dir = await mkdtemp(join(workDir, "out-"));
  try {
    await textToPdf(input, join(dir, "out.pdf"), office, opts);
    assert.deepEqual(await readdir(dir), ["out.pdf"], "the prepared text file is removed");
    return pdfText(join(dir, "out.pdf"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("the text fixtures become pages, each decoded in its own encoding", SLOW, async () => {
  const cases: Array<[string, number, string[]]> = [
    // Latin-1 without a BOM: LibreOffice alone would read it as UTF-8 and lose every accent.
    ["txt-iso8859-1-norconex.txt", 1, ["En télécommunications", "caractères codés"]],
    ["txt-utf16le-bom-xapian.txt", 1, ["Joey doesn't share food", "Джои не делится едой", "喬伊不分享食物"]],
    ["txt-utf8-nonascii-tika.txt", 1, ["Der schnelle braune Fuchs springt über den faulen Hund", "Le renard brun rapide"]],
    ["txt-utf8-alice-chapter1-norconex.txt", 4, ["Down the Rabbit-Hole", "Alice was beginning"]],
    ["bad/text-not-zip.odt", 1, ["This is not a zip file!"]],
  ];
  for (const [name, pages, phrases] of cases) {
    const pdf = await convert(join(FIXTURES, name));
    assert.equal(pdf.pages, pages, name);
    for (const phrase of phrases) assert.ok(pdf.text.includes(phrase), `${name}: "${phrase}" in ${JSON.stringify(pdf.text.slice(0, 300))}`);
  }
});

test("Windows-1252's own characters, and control characters dropped", SLOW, async () => {
  const dir = await mkdtemp(join(workDir, "in-"));
  const input = join(dir, "note.txt");
  // 0x80 euro, 0x93/0x94 curly quotes (not in ISO-8859-1), a BEL and an ESC that must not reach the page
  // (two control characters: the text must be long enough for detection's one-per-hundred rule).
  await writeFile(input, Buffer.concat([Buffer.from("Price: "), Buffer.from([0x80]), Buffer.from(" 5, "), Buffer.from([0x93]), Buffer.from("quoted"), Buffer.from([0x94, 0x07, 0x1b]), Buffer.from(" caf\xe9\r\nnext line\r\n", "latin1"), Buffer.from(`${"Some more text to read. ".repeat(10)}\r\n`)]));
  const pdf = await convert(input);
  assert.equal(pdf.pages, 1);
  assert.ok(pdf.text.includes("Price: € 5, “quoted” café"), JSON.stringify(pdf.text));
  assert.ok(pdf.text.includes("next line"));
});

test("too long, or not text at all: a clear failure and nothing left behind", SLOW, async () => {
  const dir = await mkdtemp(join(workDir, "in-"));
  const long = join(dir, "long.txt");
  await writeFile(long, "word ".repeat(1000));
  const binary = join(dir, "binary.txt");
  await writeFile(binary, Buffer.from([0x00, 0x01, 0x02, 0x03, 0xff]));
  for (const [input, kind, opts] of [[long, "limits", { maxBytes: 1000 }], [binary, "format", OPTS]] as const) {
    const out = await mkdtemp(join(workDir, "out-"));
    const err = await textToPdf(input, join(out, "out.pdf"), office, opts).then(() => assert.fail("should fail"), (e: unknown) => e);
    assert.ok(err instanceof ConversionError && err.kind === kind, String(err));
    assert.deepEqual(await readdir(out), []);
  }
});

test("clean(): line ends, form feeds and control characters", () => {
  assert.equal(clean("a\r\nb\rc\nd"), "a\nb\nc\nd");
  assert.equal(clean("page 1\fpage 2"), "page 1\n\npage 2");
  assert.equal(clean("tab\tkept\u0000\u0007\u001b\u0085\u009f gone"), "tab\tkept gone");
  assert.equal(clean("Ελληνικά 日本語 عربي"), "Ελληνικά 日本語 عربي");
});

test("HTML, SVG and WordML sent as text are published as their literal text, never rendered", SLOW, async () => {
  const dir = await mkdtemp(join(workDir, "in-"));
  const cases: Array<[string, string, string[]]> = [
    [
      "page.txt",
      `<!DOCTYPE html>\n<html><head><title>Shown title</title></head>\n<body><h1>Heading</h1><p>Para <b>bold</b></p><img src="http://127.0.0.1:9/x.png"></body></html>\n`,
      ["<!DOCTYPE html>", "<h1>Heading</h1><p>Para <b>bold</b></p>", '<img src="http://127.0.0.1:9/x.png">'],
    ],
    [
      "drawing.txt",
      `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><text x="10" y="50">Drawn words</text></svg>\n`,
      ['<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100">', '<text x="10" y="50">Drawn words</text></svg>'],
    ],
    [
      "word.txt",
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<?mso-application progid="Word.Document"?>\n<w:wordDocument xmlns:w="http://schemas.microsoft.com/office/word/2003/wordml"><w:body><w:p><w:r><w:t>Parsed words</w:t></w:r></w:p></w:body></w:wordDocument>\n`,
      ['<?mso-application progid="Word.Document"?>', "<w:p><w:r><w:t>Parsed words</w:t></w:r></w:p>"],
    ],
  ];
  for (const [name, body, phrases] of cases) {
    const input = join(dir, name);
    await writeFile(input, body);
    const pdf = await convert(input);
    assert.equal(pdf.pages, 1, name);
    // Writer wraps a long line where a space was; compare without white space.
    const flat = pdf.text.replace(/\s+/g, "");
    for (const phrase of phrases) assert.ok(flat.includes(phrase.replace(/\s+/g, "")), `${name}: ${JSON.stringify(phrase)} in ${JSON.stringify(pdf.text)}`);
  }
});
