import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConversionError } from "../../src/convert/conversion-error.ts";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { DEFAULT_SANDBOX, NO_SANDBOX } from "../../src/convert/sandbox.ts";
import { until } from "../helpers/poll.ts";

const FIXTURES = fileURLToPath(new URL("../../../shared/fixtures/", import.meta.url));
const SLOW = { timeout: 120_000 };

/** "Pages (observed)" per file, read from the MANIFEST's tables so the two cannot drift apart. */
function manifestPages(): Map<string, number> {
  const pages = new Map<string, number>();
  let column = -1;
  for (const line of readFileSync(join(FIXTURES, "MANIFEST.md"), "utf8").split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.includes("Pages (observed)")) column = cells.indexOf("Pages (observed)");
    const name = /^`(.+)`$/.exec(cells[1] ?? "")?.[1];
    const n = Number(cells[column]);
    if (column > 0 && name && Number.isInteger(n)) pages.set(name, n);
  }
  return pages;
}

function pdfPages(path: string): number {
  const info = execFileSync("pdfinfo", [path], { encoding: "utf8" });
  return Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]);
}

/** Live (non-zombie) processes in a process group, from `ps`. */
function liveInGroup(pgid: number): string[] {
  return execFileSync("ps", ["-eo", "pid=,pgid=,stat=,comm="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, g, stat]) => Number(g) === pgid && !stat?.startsWith("Z"))
    .map((fields) => fields.join(" "));
}

async function rejectsWithKind(p: Promise<unknown>, kind: string): Promise<ConversionError> {
  const err = await p.then(() => assert.fail("conversion should have failed"), (e: unknown) => e);
  assert.ok(err instanceof ConversionError, `expected a ConversionError, got ${String(err)}`);
  assert.equal(err.kind, kind, `${err.message} (${String((err.cause as Error | undefined)?.message)})`);
  return err;
}

let workDir: string;
let outDir: string;
let converter: OfficeConverter;

/** Every file in the slots' input/output folders (each slot's only data folder). */
async function ioLeftovers(dir: string): Promise<string[]> {
  const slots = await readdir(join(dir, "io"));
  return (await Promise.all(slots.map(async (s) => (await readdir(join(dir, "io", s))).map((f) => `${s}/${f}`)))).flat();
}

/** Converts and checks that nothing is left behind in the slots' input/output folders. */
async function convert(c: OfficeConverter, dir: string, input: string, output: string): Promise<void> {
  try {
    await c.convert(input, output);
  } finally {
    assert.deepEqual(await ioLeftovers(dir), [], "the slots' folders must be empty after a conversion");
  }
}

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), "quire-office-"));
  outDir = await mkdtemp(join(tmpdir(), "quire-office-out-"));
  converter = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, workDir, slots: 2, timeoutMs: 8000, restartEvery: 200 });
  await converter.start();
});

after(async () => {
  const pids = converter.slotInfo().map((s) => s.pid);
  await converter.close();
  for (const pid of pids) if (pid) assert.deepEqual(liveInGroup(pid), []);
  await rm(workDir, { recursive: true, force: true });
  await rm(outDir, { recursive: true, force: true });
});

// Where a format has several good fixtures, the longest one whose page count this machine
// reproduces. Five MANIFEST counts are not reproduced on this machine, by `soffice --convert-to`
// either (so: installed fonts, not this converter): odt-toc-15pages 14, word97-30pages 32,
// winword2-19pages 17, rtf-form-8pages 7, rtf-japanese 2 (MANIFEST 1).
const GOOD = [
  "odt-libreoffice73-odf13.odt",
  "word97-2pages-tika.doc",
  "wordperfect-2pages-table.wpd",
  "sxw-ooo112-invoice.sxw",
  "sxi-aoo411-3slides.sxi",
  "rtf-various-2pages-tika.rtf",
  "odp-libreoffice73-odf13.odp",
  "ppt-mac2001-16slides.ppt",
];

test("one good file of each office format converts to a PDF with the MANIFEST's page count", SLOW, async () => {
  const expected = manifestPages();
  for (const name of GOOD) {
    const out = join(outDir, `${name}.pdf`);
    await convert(converter, workDir, join(FIXTURES, name), out);
    assert.equal((await readFile(out)).subarray(0, 5).toString("latin1"), "%PDF-");
    assert.equal(pdfPages(out), expected.get(name), `${name}: page count`);
  }
});

test("password-protected documents fail as encrypted", SLOW, async () => {
  // Word and ODF: LibreOffice asks the interaction handler for a password, which refuses.
  // PowerPoint: LibreOffice cannot decrypt .ppt at all and never asks; the load just fails,
  // and the converter recognises the encrypted CurrentUserAtom itself (see isEncryptedPowerPoint).
  for (const name of ["bad/word-encrypted-cryptoapi.doc", "bad/odt-encrypted.odt", "bad/ppt-encrypted.ppt"]) {
    const out = join(outDir, "encrypted.pdf");
    await rejectsWithKind(convert(converter, workDir, join(FIXTURES, name), out), "encrypted");
    await assert.rejects(readFile(out), { code: "ENOENT" }, "no output for a failed conversion");
  }
});

test("unreadable input fails as corrupt", SLOW, async () => {
  await rejectsWithKind(convert(converter, workDir, join(FIXTURES, "bad/odp-corrupt-zip.odp"), join(outDir, "c.pdf")), "corrupt");
});

test("a document that hangs LibreOffice hits the limit, its soffice is killed, the slot comes back", SLOW, async () => {
  const initial = converter.slotInfo();
  const started = Date.now();
  const failed = await convert(converter, workDir, join(FIXTURES, "bad/odp-libreoffice-hangs.odp"), join(outDir, "hang.pdf")).then(
    () => assert.fail("conversion should have failed"),
    (e: unknown) => e,
  );
  assert.ok(failed instanceof ConversionError, String(failed));
  // The limit is LibreOffice's own processor time (8 s; issue 23 item 0e): it fails as too slow once
  // it used that, or, on a machine so busy that it got too little of the processor in 4 × 8 s on the
  // clock, as held back by the machine (retried by the job system).
  if (failed.kind === "limits") assert.equal(failed.message, "The document took too long to convert.");
  else assert.equal(failed.machineFault, "stalled", `${failed.kind}: ${failed.message}`);
  assert.ok(Date.now() - started < 60_000, "the limit (8 s of processor time, 32 s on the clock) must bound the conversion");

  const restarted = initial.find((b) => converter.slotInfo()[b.index]?.pid !== b.pid);
  assert.ok(restarted?.pid, "the slot that timed out gets a new soffice");
  assert.deepEqual(liveInGroup(restarted.pid), [], "nothing of the old soffice process group survives");

  await until(() => converter.slotInfo()[restarted.index]?.state === "idle", 60_000, "the slots", 100);
  // Two at once, so that both slots, including the restarted one, convert.
  const names = ["word97-2pages-tika.doc", "odp-libreoffice73-odf13.odp"];
  await Promise.all(names.map((n) => converter.convert(join(FIXTURES, n), join(outDir, `after-${n}.pdf`))));
  assert.deepEqual(await ioLeftovers(workDir), []);
  assert.equal(converter.slotInfo()[restarted.index]?.conversions, 1, "the restarted slot did one conversion");
});

/** Waits until every slot is idle, so that a test does not start on a slot still being replaced. */
async function allIdle(): Promise<void> {
  await until(() => converter.slotInfo().every((s) => s.state === "idle"), 60_000, "the slots", 100);
}

test("soffice dying mid-conversion is a transient internal error and the slot is replaced", SLOW, async () => {
  await allIdle();
  const initial = converter.slotInfo();
  const pending = converter.convert(join(FIXTURES, "bad/odp-libreoffice-hangs.odp"), join(outDir, "crash.pdf"));
  await until(() => converter.slotInfo().some((s) => s.state === "busy"), 5000, "the slots", 100);
  const busy = converter.slotInfo().find((s) => s.state === "busy")!;
  await new Promise((r) => setTimeout(r, 1000));
  const bin = execFileSync("ps", ["-eo", "pid=,pgid=,comm="], { encoding: "utf8" })
    .split("\n").map((l) => l.trim().split(/\s+/)).find(([, g, comm]) => Number(g) === busy.pid && comm === "soffice.bin");
  // SIGKILL, not SIGSEGV: LibreOffice's own crash handler may take seconds to let go (seen on a
  // loaded CI machine, where it outlasted the 8 s timeout), and what is tested here is our side.
  process.kill(Number(bin![0]), "SIGKILL");
  const err = await rejectsWithKind(pending, "internal");
  assert.equal(err.transient, true, "a crash is retried by the job system");
  await until(() => converter.slotInfo()[busy.index]?.state === "idle", 60_000, "the slots", 100);
  assert.notEqual(converter.slotInfo()[busy.index]?.pid, initial[busy.index]?.pid);
  assert.deepEqual(liveInGroup(busy.pid!), []);
  assert.deepEqual(await ioLeftovers(workDir), []);
});

test("aborting a running conversion rejects with the signal's reason and replaces the slot", SLOW, async () => {
  await allIdle();
  const initial = converter.slotInfo();
  const err = await converter
    .convert(join(FIXTURES, "bad/odp-libreoffice-hangs.odp"), join(outDir, "abort.pdf"), AbortSignal.timeout(1000))
    .then(() => assert.fail("should have been aborted"), (e: unknown) => e);
  assert.equal((err as Error).name, "TimeoutError");
  const replaced = initial.find((b) => converter.slotInfo()[b.index]?.pid !== b.pid);
  assert.ok(replaced?.pid);
  assert.deepEqual(liveInGroup(replaced.pid), []);
  await until(() => converter.slotInfo().every((s) => s.state === "idle"), 60_000, "the slots", 100);
});

test("a slot is restarted after restartEvery conversions", SLOW, async () => {
  const dir = await mkdtemp(join(tmpdir(), "quire-office-restart-"));
  const c = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, workDir: dir, slots: 2, timeoutMs: 30_000, restartEvery: 2 });
  await c.start();
  try {
    const first = c.slotInfo()[0]!.pid!;
    const input = join(FIXTURES, "word6-poi.doc");
    // Sequential jobs all go to the first idle slot: slot 0 does two and is then replaced.
    await convert(c, dir, input, join(dir, "1.pdf"));
    await convert(c, dir, input, join(dir, "2.pdf"));
    await until(() => c.slotInfo()[0]!.state === "idle", 60_000, "the slots", 100);
    const second = c.slotInfo()[0]!.pid!;
    assert.notEqual(second, first, "slot 0 runs a new soffice");
    assert.deepEqual(liveInGroup(first), [], "the old soffice is gone");
    await convert(c, dir, input, join(dir, "3.pdf"));
    assert.equal(pdfPages(join(dir, "3.pdf")), 1);
  } finally {
    await c.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// --- network: a document that makes LibreOffice fetch from a local HTTP server ---

/**
 * Three ways a document can point at a URL. Observed on LibreOffice 7.4.7 with this converter's
 * profile (BlockUntrustedRefererLinks on): the <draw:image> link is refused by the profile, but
 * the paragraph background image and the XForms instance are still fetched without a network
 * namespace (see the control test). So the profile alone is not the fence; the namespace is.
 */
function linkingFodt(base: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
  xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
  xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:xforms="http://www.w3.org/2002/xforms"
  office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:automatic-styles>
  <style:style style:name="P1" style:family="paragraph"><style:paragraph-properties>
   <style:background-image xlink:href="${base}/bg.png" xlink:type="simple" xlink:actuate="onLoad" style:repeat="repeat"/>
  </style:paragraph-properties></style:style>
 </office:automatic-styles>
 <office:body><office:text>
  <office:forms><xforms:model xforms:id="M1"><xforms:instance src="${base}/instance.xml"/></xforms:model></office:forms>
  <text:p text:style-name="P1">Linked content below.</text:p>
  <text:p><draw:frame draw:name="img" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm">
   <draw:image xlink:href="${base}/img.png" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>
  </draw:frame></text:p>
 </office:text></office:body>
</office:document>
`;
}

const PNG_1PX = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

async function withLinkingDocument(fn: (doc: string, requests: string[]) => Promise<void>): Promise<void> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url?.endsWith(".png")) res.writeHead(200, { "content-type": "image/png" }).end(PNG_1PX);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const dir = await mkdtemp(join(tmpdir(), "quire-office-net-"));
  try {
    const doc = join(dir, "links.fodt");
    await writeFile(doc, linkingFodt(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    await fn(doc, requests);
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test("in the sandbox, a document's linked URLs are never fetched", SLOW, async () => {
  // Structural check: soffice.bin lives in a network namespace other than ours.
  const [gid] = converter.slotInfo().map((s) => s.pid!);
  const members = execFileSync("ps", ["-eo", "pid=,pgid=,comm="], { encoding: "utf8" })
    .split("\n").map((l) => l.trim().split(/\s+/)).filter(([, g, comm]) => Number(g) === gid && comm === "soffice.bin");
  assert.equal(members.length, 1, "one soffice.bin in the slot's process group");
  assert.notEqual(readlinkSync(`/proc/${members[0]![0]}/ns/net`), readlinkSync("/proc/self/ns/net"));

  await withLinkingDocument(async (doc, requests) => {
    await convert(converter, workDir, doc, join(outDir, "links.pdf"));
    assert.equal(pdfPages(join(outDir, "links.pdf")), 1);
    assert.deepEqual(requests, [], "the server must not have been contacted");
  });
});

test("control: without the sandbox the same document does reach the server", SLOW, async () => {
  const dir = await mkdtemp(join(tmpdir(), "quire-office-open-"));
  const c = new OfficeConverter({ workDir: dir, slots: 1, timeoutMs: 30_000, restartEvery: 200, sandbox: NO_SANDBOX });
  await c.start();
  try {
    await withLinkingDocument(async (doc, requests) => {
      await convert(c, dir, doc, join(dir, "links.pdf"));
      assert.ok(requests.length > 0, "LibreOffice fetched something; otherwise the test above proves nothing");
      assert.ok(!requests.some((r) => r.includes("/img.png")), "the profile does refuse the <draw:image> link");
    });
  } finally {
    await c.close();
    await rm(dir, { recursive: true, force: true });
  }
});
