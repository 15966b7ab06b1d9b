import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { crc32 } from "node:zlib";
import sharp from "sharp";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { extractText, renderPages } from "../../src/convert/pdf-pages.ts";
import { DEFAULT_SANDBOX, NO_SANDBOX, sandboxView } from "../../src/convert/sandbox.ts";
import { zipOf } from "../helpers/zip-writer.ts";

/**
 * Issue 11 item 1: a document names a file of the server (a linked image, an included text, a
 * field printing its own path…) and LibreOffice, converting it, reads that file into the published
 * page. Each document here is built by the test and converted by the real converter and renderer;
 * the files it names sit where a converter without its sandbox would find them: in the data
 * folder and in /tmp. A control converter without the sandbox shows that the documents do leak.
 */

const SLOW = { timeout: 180_000 };
const SECRET_WORD = "QuireLeakedSecretWord";
const LIMITS = { maxPages: 50, maxPagePixels: 50_000_000, timeoutMs: 60_000, sandbox: DEFAULT_SANDBOX };

// What a converter must never carry: set before any converter starts, as `quire worker` has them.
process.env.QUIRE_SECRET_KEY = "c2VjcmV0LWtleS1mb3ItdGhlLXNhbmRib3gtdGVzdHMh";
process.env.AWS_SECRET_ACCESS_KEY = "aws-secret-for-the-sandbox-test";
process.env.QUIRE_DATABASE_URL = "postgres://user:password@db/quire";

let root: string;
let dataDir: string;
let outside: string;
let sandboxed: OfficeConverter;
let control: OfficeConverter;
/** The places a leaked file could come from, one per folder. */
let places: Array<{ dir: string; png: string; txt: string; xml: string }>;

before(async () => {
  root = await mkdtemp(join(tmpdir(), "quire-sandbox-"));
  dataDir = join(root, "data");
  outside = await mkdtemp("/tmp/quire-leak-");
  places = [];
  for (const dir of [dataDir, outside]) {
    await mkdir(dir, { recursive: true });
    const png = join(dir, "magenta.png");
    await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 255, g: 0, b: 255 } } }).png().toFile(png);
    const txt = join(dir, "secret.txt");
    await writeFile(txt, `${SECRET_WORD}\n`);
    const xml = join(dir, "instance.xml");
    await writeFile(xml, `<data><v>${SECRET_WORD}</v></data>`);
    places.push({ dir, png, txt, xml });
  }
  sandboxed = new OfficeConverter({ workDir: join(dataDir, "tmp", "office"), slots: 1, timeoutMs: 60_000, sandbox: DEFAULT_SANDBOX });
  control = new OfficeConverter({ workDir: join(dataDir, "tmp", "control"), slots: 1, timeoutMs: 60_000, sandbox: NO_SANDBOX });
  await Promise.all([sandboxed.start(), control.start()]);
});

after(async () => {
  await Promise.all([sandboxed?.close(), control?.close()]);
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const url = (path: string) => `file://${path}`;

function stored(name: string, data: string | Buffer) {
  const body = Buffer.from(data);
  return { name, method: 0 as const, body, crc: crc32(body), size: body.length };
}

/** A minimal ODT: the body's XML and its automatic styles. */
function odt(body: string, styles = ""): Buffer {
  const content = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:form="urn:oasis:names:tc:opendocument:xmlns:form:1.0" xmlns:xforms="http://www.w3.org/2002/xforms" office:version="1.2">
<office:automatic-styles>${styles}</office:automatic-styles>
<office:body><office:text>${body}</office:text></office:body>
</office:document-content>`;
  const manifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">
<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>
<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
</manifest:manifest>`;
  return zipOf([stored("mimetype", "application/vnd.oasis.opendocument.text"), stored("content.xml", content), stored("META-INF/manifest.xml", manifest)]);
}

interface Leak {
  magentaPixels: number;
  text: string;
}

/** Converts `doc` and renders it as the pipeline does; what the published pages would show. */
async function publish(converter: OfficeConverter, name: string, doc: Buffer): Promise<Leak> {
  const dir = await mkdtemp(join(dataDir, `${name}-`));
  try {
    const input = join(dir, "original");
    await writeFile(input, doc);
    const pdf = join(dir, "document.pdf");
    await converter.convert(input, pdf);
    const pages = await renderPages(pdf, join(dir, "pages"), { widths: { thumb: 100, read: 600 }, limits: LIMITS });
    let magentaPixels = 0;
    for (const p of pages.filter((x) => x.size === "read")) {
      const { data, info } = await sharp(p.path).raw().toBuffer({ resolveWithObject: true });
      for (let i = 0; i < data.length; i += info.channels) {
        if (data[i]! > 200 && data[i + 1]! < 90 && data[i + 2]! > 200) magentaPixels++;
      }
    }
    const text = (await extractText(pdf, LIMITS)).map((p) => p.text).join("\n");
    return { magentaPixels, text };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Server paths a document must never be able to print. */
function assertNoPath(text: string, what: string): void {
  for (const p of [root, outside, dataDir, "/tmp/", tmpdir()]) assert.ok(!text.includes(p), `${what}: the text shows ${p}:\n${text}`);
}

/** Which of `files` something reads while `during` runs (access times set far in the past first). */
async function readDuring<T>(files: string[], during: () => Promise<T>): Promise<{ result: T; read: string[] }> {
  for (const file of files) await utimes(file, new Date("2000-01-01T00:00:00Z"), (await stat(file)).mtime);
  const result = await during();
  const read: string[] = [];
  for (const file of files) if ((await stat(file)).atimeMs > Date.parse("2001-01-01T00:00:00Z")) read.push(file);
  return { result, read };
}

const allFiles = () => places.flatMap((p) => [p.png, p.txt, p.xml]);

const cases: Array<{ name: string; doc: () => Buffer; control: "pixels" | "text" | "path" | "none" }> = [
  {
    name: "ODT paragraph background image (style:background-image)",
    control: "pixels",
    doc: () =>
      odt(
        places.map((_, i) => `<text:p text:style-name="P${i}">background ${i}</text:p>`).join(""),
        places
          .map(
            (p, i) =>
              `<style:style style:name="P${i}" style:family="paragraph"><style:paragraph-properties fo:padding="2cm"><style:background-image xlink:href="${url(p.png)}" xlink:type="simple" xlink:actuate="onLoad" style:repeat="stretch"/></style:paragraph-properties></style:style>`,
          )
          .join(""),
      ),
  },
  {
    name: "ODT linked image (draw:image xlink:href)",
    control: "none", // BlockUntrustedRefererLinks in the profile stops this one already
    doc: () =>
      odt(
        places
          .map(
            (p, i) =>
              `<text:p><draw:frame draw:name="img${i}" text:anchor-type="as-char" svg:width="4cm" svg:height="4cm"><draw:image xlink:href="${url(p.png)}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>`,
          )
          .join(""),
      ),
  },
  {
    name: "RTF INCLUDEPICTURE field",
    control: "pixels",
    doc: () =>
      Buffer.from(
        `{\\rtf1\\ansi ${places.map((p) => `{\\field{\\*\\fldinst INCLUDEPICTURE "${url(p.png)}" \\\\d}{\\fldrslt x}}\\par`).join("")}}`,
      ),
  },
  {
    name: "RTF FILENAME field (the document's own path)",
    control: "path",
    doc: () => Buffer.from(`{\\rtf1\\ansi name: {\\field{\\*\\fldinst FILENAME \\\\p}{\\fldrslt x}}\\par}`),
  },
  {
    name: "ODT file-name field (the document's own path)",
    control: "path",
    doc: () => odt(`<text:p>name: <text:file-name text:display="full">x</text:file-name></text:p>`),
  },
  {
    name: "RTF INCLUDETEXT field",
    control: "none",
    doc: () => Buffer.from(`{\\rtf1\\ansi ${places.map((p) => `{\\field{\\*\\fldinst INCLUDETEXT "${p.txt}"}{\\fldrslt cached}}\\par`).join("")}}`),
  },
  {
    name: "ODT linked section (text:section-source)",
    control: "none",
    doc: () =>
      odt(places.map((p, i) => `<text:section text:name="S${i}"><text:section-source xlink:href="${url(p.txt)}" text:filter-name="Text"/><text:p>cached</text:p></text:section>`).join("")),
  },
  {
    name: "RTF LINK field (DDE/OLE link to a file)",
    control: "none",
    doc: () => Buffer.from(`{\\rtf1\\ansi ${places.map((p) => `{\\field{\\*\\fldinst LINK soffice "${p.txt}" "" \\\\a \\\\t}{\\fldrslt cached}}\\par`).join("")}}`),
  },
  {
    name: "ODT linked OLE object (draw:object xlink:href)",
    control: "none",
    doc: () =>
      odt(places.map((p, i) => `<text:p><draw:frame draw:name="ole${i}" text:anchor-type="as-char" svg:width="4cm" svg:height="4cm"><draw:object xlink:href="${url(p.txt)}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>`).join("")),
  },
  {
    name: "ODT DDE connection to a file (text:dde-connection)",
    control: "none",
    doc: () =>
      odt(
        `<text:dde-connection-decls>${places.map((p, i) => `<text:dde-connection-decl office:name="D${i}" office:dde-application="soffice" office:dde-topic="${p.txt}" office:dde-item="" office:automatic-update="true"/>`).join("")}</text:dde-connection-decls>` +
          places.map((_, i) => `<text:p><text:dde-connection text:connection-name="D${i}">cached</text:dde-connection></text:p>`).join(""),
      ),
  },
];

describe("a document cannot make the converter read the server's files", SLOW, () => {
  for (const c of cases) {
    test(c.name, SLOW, async (t) => {
      const { result: leak, read } = await readDuring(allFiles(), () => publish(sandboxed, "doc", c.doc()));
      assert.deepEqual(read, [], "no file it names is even read");
      assert.equal(leak.magentaPixels, 0, "the page shows the named image");
      assert.ok(!leak.text.includes(SECRET_WORD), `the page shows the named text file:\n${leak.text}`);
      assertNoPath(leak.text, c.name);

      const { result: shown, read: controlRead } = await readDuring(allFiles(), () => publish(control, "doc", c.doc()));
      t.diagnostic(`control, without the sandbox: ${shown.magentaPixels} magenta px, read ${controlRead.join(", ") || "nothing"}`);
      if (c.control === "pixels") assert.ok(shown.magentaPixels > 100, `control: without the sandbox the image is shown (${shown.magentaPixels} px)`);
      if (c.control === "path") assert.ok(shown.text.includes(dataDir), `control: without the sandbox the path is shown:\n${shown.text}`);
    });
  }

  test("ODT XForms instance src: the named file is never read", SLOW, async () => {
    const doc = (xml: string) =>
      odt(
        `<office:forms form:automatic-focus="false" form:apply-design-mode="false"><xforms:model xforms:id="M1"><xforms:instance src="${url(xml)}"/></xforms:model></office:forms><text:p>form</text:p>`,
      );
    for (const p of places) {
      assert.deepEqual((await readDuring([p.xml], () => publish(sandboxed, "xforms", doc(p.xml)))).read, [], `${p.xml} was read`);
    }
    const [inData] = places;
    assert.deepEqual((await readDuring([inData!.xml], () => publish(control, "xforms", doc(inData!.xml)))).read, [inData!.xml], "control: without the sandbox it is read");
  });
});

/** Pids of live soffice.bin processes in a process group. */
function sofficeIn(pgid: number): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, "utf8");
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return Number(pgrp) === pgid && state !== "Z" && stat.includes("(soffice.bin)");
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("what a converter is given", () => {
  test("the running soffice's environment holds nothing of Quire's", () => {
    const [pid] = sofficeIn(sandboxed.slotInfo()[0]!.pid!);
    assert.ok(pid, "the sandboxed slot's soffice.bin is running");
    const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
    const names = env.map((v) => v.slice(0, v.indexOf("="))).sort();
    assert.ok(!names.some((n) => n.startsWith("QUIRE_") || n.startsWith("AWS_")), names.join(" "));
    for (const secret of [process.env.QUIRE_SECRET_KEY!, process.env.AWS_SECRET_ACCESS_KEY!, "password@db"]) {
      assert.ok(!env.some((v) => v.includes(secret)), "no secret value either");
    }
  });

  test("a program run in the sandbox sees an empty environment, no data folder, no network, no other process", () => {
    const view = sandboxView({ readOnly: [[places[0]!.txt, "/in/secret.txt"]], addressSpaceBytes: 1024 ** 3 }, DEFAULT_SANDBOX);
    const script = [
      "env | sort",
      `test -e ${dataDir} && echo DATA-VISIBLE`,
      `test -e ${outside} && echo TMP-VISIBLE`,
      "test -e /usr/share/pixmaps && echo PIXMAPS-VISIBLE",
      "test -e /etc/passwd && echo ETC-VISIBLE",
      "cat /in/secret.txt",
      "id -u",
      "ls /proc | grep -c '^[0-9]'",
      "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '",
    ].join("; ");
    const cmd = view.command("/bin/sh", ["-c", script]);
    const run = spawnSync(cmd.file, cmd.args, { env: cmd.env, encoding: "utf8" });
    const lines = run.stdout.trim().split("\n");
    assert.equal(run.status, 0, run.stderr);
    const envLines = lines.filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.slice(0, l.indexOf("=")));
    assert.deepEqual(envLines.filter((n) => n !== "PWD" && n !== "SHLVL" && n !== "_"), ["HOME", "LANG", "PATH", "TMPDIR"]);
    for (const word of ["DATA-VISIBLE", "TMP-VISIBLE", "PIXMAPS-VISIBLE", "ETC-VISIBLE"]) assert.ok(!lines.includes(word), `${word}\n${run.stdout}`);
    assert.ok(lines.includes(SECRET_WORD), "the file it was given is readable");
    assert.ok(lines.includes("65534"), "runs as nobody");
    const rest = lines.slice(lines.indexOf("65534") + 1);
    assert.ok(Number(rest[0]) <= 4, `only its own processes: ${rest[0]}`);
    assert.deepEqual(rest.slice(1), ["lo"], "only a loopback interface");
  });
});
